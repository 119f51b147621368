package event

import "testing"

func TestOpFromRWBS(t *testing.T) {
	cases := map[string]Op{"R": OpRead, "RS": OpRead, "RA": OpRead, "WS": OpWrite, "FWS": OpWrite, "FF": OpOther, "D": OpOther, "N": OpOther, "": OpOther}
	for in, want := range cases {
		if got := OpFromRWBS(in); got != want {
			t.Errorf("OpFromRWBS(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestDevRoundTrip(t *testing.T) {
	d, err := ParseDev("259,3")
	if err != nil {
		t.Fatal(err)
	}
	if d.Major() != 259 || d.Minor() != 3 || d.String() != "259,3" || uint32(d) != 259<<20|3 {
		t.Errorf("ParseDev(259,3) = %v (%#x)", d, uint32(d))
	}
	for _, bad := range []string{"", "7", "x,1", "7,y", "99999,1"} {
		if _, err := ParseDev(bad); err == nil {
			t.Errorf("ParseDev(%q) accepted", bad)
		}
	}
}
