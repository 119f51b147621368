package perfiface

import (
	"regexp"
	"testing"
)

// The scanners read words as these expressions read them.
var (
	solverTermRE = regexp.MustCompile(`\b(t|v|x|c|u|m|e|r|rm|tc|csum|found|mem)\d+\b|opaque\(|branch_at\(`)
	rawNameRE    = regexp.MustCompile(`\b(t|v|x|c|u|m|e|r|rm|tc|csum|found|mem)\d+\b|mem\[|pkt\[|\ble\d+\(|concat\(|bit\(|opaque\(`)
)

func TestNamesKnownAnswers(t *testing.T) {
	for _, c := range []struct {
		s           string
		solver, raw bool
	}{
		{"pkt.ipv4.ttl == 1", false, false},
		{"t12 == 0", true, true},
		{"rm3 > 4", true, true},
		{"at12 == 0", false, false},
		{"t12_x == 0", false, false},
		{"found7", true, true},
		{"le32(pkt.ipv4.saddr) == 4", false, true},
		{"le32 (x) == 4", false, false},
		{"pkt[14] == 8", false, true},
		{"opaque(3)", true, true},
		{"branch_at(12)", true, false},
		{"csum", false, false},
		{"mem0[4]", true, true},
	} {
		if got := solverTerm(c.s); got != c.solver {
			t.Errorf("solverTerm(%q) = %v, want %v", c.s, got, c.solver)
		}
		if got := rawName(c.s); got != c.raw {
			t.Errorf("rawName(%q) = %v, want %v", c.s, got, c.raw)
		}
	}
}

func FuzzNames(f *testing.F) {
	for _, s := range []string{"t12 == 0", "le32(x)", "rm3_", "xt1", "pkt[(pkt[59] << 3) + 66]", "branch_at(1)", "é12 t1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := solverTerm(s), solverTermRE.MatchString(s); got != want {
			t.Errorf("solverTerm(%q) = %v, the expression says %v", s, got, want)
		}
		if got, want := rawName(s), rawNameRE.MatchString(s); got != want {
			t.Errorf("rawName(%q) = %v, the expression says %v", s, got, want)
		}
	})
}
