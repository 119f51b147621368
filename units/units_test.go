package units

import "testing"

func TestParseRate(t *testing.T) {
	for _, c := range []struct {
		in   string
		v    float64
		kind RateKind
	}{
		{"10Mpps", 10e6, Packets}, {"54.4Mpkt/s", 54.4e6, Packets}, {"25Gbit/s", 25e9, Bits},
		{"25Gbps", 25e9, Bits}, {"800kpps", 800e3, Packets}, {"1000pps", 1000, Packets}, {"1.5 Tbit/s", 1.5e12, Bits},
	} {
		v, k, err := ParseRate(c.in)
		if err != nil || v != c.v || k != c.kind {
			t.Errorf("ParseRate(%q) = %g, %v, %v; want %g, %v", c.in, v, k, err, c.v, c.kind)
		}
	}
	for _, bad := range []string{"", "10", "10M", "fastpps", "-1pps", "10Xpps", "1e999pps"} {
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
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

func FuzzParseRate(f *testing.F) {
	for _, s := range []string{"10Mpps", "25Gbit/s", "1.5 Tbit/s", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, _, err := ParseRate(s)
		if err == nil && (v < 0 || v != v) {
			t.Fatalf("ParseRate(%q) = %g", s, v)
		}
	})
}
