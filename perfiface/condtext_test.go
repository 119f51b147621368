package perfiface

import "testing"

// Negating a negation gives the test back, never "not (not (...))".
func TestNegationsSimplify(t *testing.T) {
	cases := []struct{ test, negated, step string }{
		{"pkt.ip.proto == 17", "pkt.ip.proto != 17", "not (pkt.ip.proto == 17)"},
		{"not (pkt.ip.proto == 17)", "pkt.ip.proto == 17", "pkt.ip.proto == 17"},
		{"not (a == 1 and b == 2)", "a == 1 and b == 2", "a == 1 and b == 2"},
		{"not contains(flows, key)", "contains(flows, key)", "contains(flows, key)"},
		{"not (a == 1) and not (b == 2)", "not (not (a == 1) and not (b == 2))", "not (not (a == 1) and not (b == 2))"},
		{"a == 1 or b == 2", "not (a == 1 or b == 2)", "not (a == 1 or b == 2)"},
	}
	for _, c := range cases {
		if got := negTest(c.test); got != c.negated {
			t.Errorf("negTest(%q) = %q, want %q", c.test, got, c.negated)
		}
		if got := StepName(Step{Test: c.test}); got != c.step {
			t.Errorf("StepName(not %q) = %q, want %q", c.test, got, c.step)
		}
	}
}

func TestShortTest(t *testing.T) {
	cases := map[string]string{
		"pkt.ip.proto == 17": "pkt.ip.proto == 17",
		"flows.contains(saddr=concat(concat(0, 0, 0, pkt.ip.proto, pkt[37]), le64(pkt[26:34])), sport=pkt.udp.sport)": "flows.contains(saddr=…, sport=pkt.udp.sport)",
		"sources.contains(pkt.ip.src) and a.contains(key)":                                                            "sources.contains(pkt.ip.src) and a.contains(key)",
		"m.contains(concat(pkt[1], pkt[2], pkt[3], pkt[4], pkt[5]))":                                                  "m.contains(…)",
		"broken.contains(x": "broken.contains(x",
	}
	for in, want := range cases {
		if got := shortTest(in); got != want {
			t.Errorf("shortTest(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestNegTest(t *testing.T) {
	cases := map[string]string{
		"pkt.ip.proto == 17":               "pkt.ip.proto != 17",
		"pkt.len < (14 + x) + 8":           "pkt.len >= (14 + x) + 8",
		"le64(v[0:8]) <= 63":               "le64(v[0:8]) > 63",
		"flows.contains(saddr=…, sport=…)": "not flows.contains(saddr=…, sport=…)",
		"a == 1 and b == 2":                "not (a == 1 and b == 2)",
		"(a == 1) == (b == 2)":             "not ((a == 1) == (b == 2))",
		"pkt[66:68] & 5 == 0":              "pkt[66:68] & 5 != 0",
		"x << 2 > 3":                       "x << 2 <= 3",
	}
	for in, want := range cases {
		if got := negTest(in); got != want {
			t.Errorf("negTest(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestAndText: a class's conditions joined with "and" keep an "or" among
// them together, as Python reads it.
func TestAndText(t *testing.T) {
	for _, c := range []struct {
		conds []string
		want  string
	}{
		{[]string{"a == 1"}, "a == 1"},
		{[]string{"a == 1 or b == 2"}, "a == 1 or b == 2"},
		{[]string{"a == 1 or b == 2", "c < 3"}, "(a == 1 or b == 2) and c < 3"},
		{[]string{"not (a or b)", "c and d"}, "(not (a or b)) and c and d"},
	} {
		if got := andText(c.conds); got != c.want {
			t.Errorf("%q: got %q, want %q", c.conds, got, c.want)
		}
	}
}
