package units

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestParse(t *testing.T) {
	cases := []struct {
		in   string
		k    Kind
		want float64
	}{
		{"25Gbit/s", Rate, 25e9 / 8},
		{"25Gbps", Rate, 25e9 / 8},
		{"25Gb/s", Rate, 25e9 / 8},
		{"3.2GB/s", Rate, 3.2e9},
		{"1GiB/s", Rate, 1 << 30},
		{"100 Mbit/s", Rate, 100e6 / 8},
		{"800kbit/s", Rate, 800e3 / 8},
		{"1500B", Size, 1500},
		{"4KiB", Size, 4096},
		{"4kB", Size, 4000},
		{"2us", Time, 2e-6},
		{"2µs", Time, 2e-6},
		{"44.41e-6s", Time, 44.41e-6},
		{"1e3ns", Time, 1e-6},
		{"0.5ms", Time, 5e-4},
	}
	for _, c := range cases {
		got, err := Parse(c.in, c.k)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.in, err)
			continue
		}
		if math.Abs(got-c.want) > 1e-12*math.Abs(c.want) {
			t.Errorf("Parse(%q) = %g, want %g", c.in, got, c.want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, c := range []struct {
		in string
		k  Kind
	}{{"25", Rate}, {"Gbit/s", Rate}, {"25Gbit", Rate}, {"25Gbit/h", Rate}, {"1500", Size}, {"10Mpps", Rate},
		{"2 parsecs", Time}, {"NaNs", Time}, {"1..2us", Time}, {"", Size}, {"10us", Size}, {"1Kibit", Size}} {
		if _, err := Parse(c.in, c.k); err == nil {
			t.Errorf("Parse(%q, %v): no error", c.in, c.k)
		}
	}
}

func TestParseRate(t *testing.T) {
	for _, c := range []struct {
		in   string
		v    float64
		kind RateKind
	}{
		{"10Mpps", 10e6, Packets}, {"54.4Mpkt/s", 54.4e6, Packets}, {"25Gbit/s", 25e9, Bits},
		{"25Gbps", 25e9, Bits}, {"800kpps", 800e3, Packets}, {"1000pps", 1000, Packets}, {"1.5 Tbit/s", 1.5e12, Bits},
		{"3.2GB/s", 25.6e9, Bits},
	} {
		v, k, err := ParseRate(c.in)
		if err != nil || math.Abs(v-c.v) > 1e-9*c.v || k != c.kind {
			t.Errorf("ParseRate(%q) = %g, %v, %v; want %g, %v", c.in, v, k, err, c.v, c.kind)
		}
	}
	for _, bad := range []string{"", "10", "10M", "fastpps", "-1pps", "10Xpps", "1e999pps", "10Kipps", "2us"} {
		if _, _, err := ParseRate(bad); err == nil {
			t.Errorf("ParseRate(%q) accepted", bad)
		}
	}
}

func TestFormat(t *testing.T) {
	for _, c := range []struct {
		got, want string
	}{
		{PacketRate(12.34e6), "12.3 Mpkt/s"}, {BitRate(5.9232e9), "5.92 Gbit/s"}, {PacketRate(950), "950 pkt/s"},
		{FormatRate(25e9 / 8), "25.000Gbit/s"}, {FormatTime(2.5e-6), "2.500us"}, {FormatTime(250e-9), "250.0ns"},
		{Format(1.2e9, Rate), "9.6Gbit/s"}, {Format(4096, Size), "4096B"}, {Format(12.5e-6, Time), "12.5us"},
		{Format(0, Time), "0s"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

// Format's output reads back to six significant digits.
func TestFormatRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		v := math.Pow(10, rng.Float64()*20-10)
		for _, k := range []Kind{Rate, Size, Time} {
			got, err := Parse(Format(v, k), k)
			if err != nil || math.Abs(got-v) > 5e-6*v {
				t.Fatalf("Parse(Format(%g, %v) = %q) = %g, %v", v, k, Format(v, k), got, err)
			}
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"25Gbit/s", "1500B", "2us", "1e3ns", "-1B", "+.5GB/s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, k := range []Kind{Rate, Size, Time} {
			v, err := Parse(s, k)
			if err == nil && (math.IsNaN(v) || math.IsInf(v, 0)) {
				t.Fatalf("Parse(%q) = %v without error", s, v)
			}
		}
	})
}

func FuzzParseRate(f *testing.F) {
	for _, s := range []string{"10Mpps", "25Gbit/s", "1.5 Tbit/s", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, _, err := ParseRate(s)
		if err == nil && (v < 0 || v != v || math.IsInf(v, 0)) {
			t.Fatalf("ParseRate(%q) = %g", s, v)
		}
	})
}
