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
