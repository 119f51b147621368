package main

import (
	"regexp"
	"strings"
	"testing"
)

// TestInterfaceHashNamed: dns_qname keys its answers map by a hash of the
// query name, which the checker abstracts; the interface shows the key as
// a hash of the packet bytes it was computed from, never by the solver's
// name for it (a3657).
func TestInterfaceHashNamed(t *testing.T) {
	out, errs, code := dpperf(t, "interface", "--target", "x86-64", "--workers", "1", "--resolution", "0", "--max-paths", "100", built(t, "dns_qname"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !regexp.MustCompile(`answers\.contains\(hash=hash\(pkt\[55\], pkt\[57[]:]`).MatchString(out) {
		t.Errorf("no lookup keyed by a hash of the query name's bytes:\n%s", out)
	}
	solverName := regexp.MustCompile(`\b(?:a|u|x|h|c|t|rm|rnd|time|csum|found)[0-9]+\b`)
	for _, line := range strings.Split(out, "\n") {
		code, _, _ := strings.Cut(line, "#") // comments quote source lines
		if m := solverName.FindString(code); m != "" {
			t.Errorf("a condition shows the solver's name %s: %s", m, strings.TrimSpace(line))
			break
		}
	}
}
