package units

import (
	"math"
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
		{"3.2GB/s", Rate, 3.2e9},
		{"1GiB/s", Rate, 1 << 30},
		{"100 Mbit/s", Rate, 100e6 / 8},
		{"1500B", Size, 1500},
		{"4KiB", Size, 4096},
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
	}{{"25", Rate}, {"Gbit/s", Rate}, {"25Gbit", Rate}, {"25Gbit/h", Rate}, {"1500", Size},
		{"2 parsecs", Time}, {"NaNs", Time}, {"1..2us", Time}, {"", Size}, {"10us", Size}} {
		if _, err := Parse(c.in, c.k); err == nil {
			t.Errorf("Parse(%q, %v): no error", c.in, c.k)
		}
	}
}

func TestFormat(t *testing.T) {
	if got := FormatRate(25e9 / 8); got != "25.000Gbit/s" {
		t.Errorf("FormatRate = %q", got)
	}
	if got := FormatTime(2.5e-6); got != "2.500us" {
		t.Errorf("FormatTime = %q", got)
	}
	if got := FormatTime(250e-9); got != "250.0ns" {
		t.Errorf("FormatTime = %q", got)
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
