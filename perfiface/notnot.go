package perfiface

import (
	"strings"

	"github.com/dpperf/dpperf/smt"
)

// stripNot returns the test t negates when t is a negation ("not (x)" or
// "not x" without and/or), so that negating it again gives x rather than
// "not (not (x))".
func stripNot(t string) (string, bool) {
	rest, ok := strings.CutPrefix(t, "not ")
	if !ok {
		return "", false
	}
	if strings.HasPrefix(rest, "(") && smt.Closing(rest) == len(rest)-1 {
		return rest[1 : len(rest)-1], true
	}
	if strings.Contains(rest, " and ") || strings.Contains(rest, " or ") {
		return "", false
	}
	return rest, true
}
