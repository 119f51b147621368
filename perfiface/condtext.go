package perfiface

// The text of a class's conditions: tests as the views print them,
// negated and shortened for a line of a table.

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

// maxArg is the longest argument of a map membership test kept whole in a
// class's conditions; longer ones (whole key structs built byte by byte)
// become "…".
const maxArg = 24

// shortTest shortens the arguments of map membership tests:
// flows.contains(saddr=concat(...), sport=...) becomes
// flows.contains(saddr=…, sport=…).
func shortTest(t string) string {
	const marker = ".contains("
	var b strings.Builder
	for {
		i := strings.Index(t, marker)
		if i < 0 {
			b.WriteString(t)
			return b.String()
		}
		start := i + len(marker)
		end, args := splitArgs(t[start:])
		if end < 0 {
			b.WriteString(t)
			return b.String()
		}
		b.WriteString(t[:start])
		for j, a := range args {
			if j > 0 {
				b.WriteString(", ")
			}
			name, val, named := strings.Cut(a, "=")
			if !named || strings.ContainsAny(name, " ([") {
				name, val, named = "", a, false
			}
			if len(val) > maxArg {
				val = "…"
			}
			if named {
				b.WriteString(name + "=")
			}
			b.WriteString(val)
		}
		b.WriteByte(')')
		t = t[start+end+1:]
	}
}

// splitArgs splits s, which follows an opening parenthesis, into its
// top-level comma-separated arguments up to the matching closing one, and
// returns that one's index (-1 if missing).
func splitArgs(s string) (int, []string) {
	depth, from := 0, 0
	var args []string
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(', '[':
			depth++
		case ']':
			depth--
		case ')':
			if depth == 0 {
				return i, append(args, strings.TrimSpace(s[from:i]))
			}
			depth--
		case ',':
			if depth == 0 {
				args = append(args, strings.TrimSpace(s[from:i]))
				from = i + 1
			}
		}
	}
	return -1, nil
}

// negations are the comparison operators with their negations.
var negations = map[string]string{" == ": " != ", " != ": " == ", " < ": " >= ", " >= ": " < ", " > ": " <= ", " <= ": " > "}

// negTest negates a test: a single comparison by its opposite operator,
// anything else with "not".
func negTest(t string) string {
	if inner, ok := stripNot(t); ok {
		return inner
	}
	if !strings.Contains(t, " and ") && !strings.Contains(t, " or ") {
		found, op := 0, ""
		for o := range negations {
			if n := strings.Count(t, o); n > 0 {
				found += n
				op = o
			}
		}
		if found == 1 {
			return strings.Replace(t, op, negations[op], 1)
		}
		if found == 0 { // Python's not binds looser than any operator but and/or
			return "not " + t
		}
	}
	return "not (" + t + ")"
}

// boolOp combines two bit texts, folding True and False.
func boolOp(op, a, b string) string {
	if a == "True" || a == "False" {
		a, b = b, a
	}
	switch {
	case op == "&" && b == "True", op == "|" && b == "False", op == "^" && b == "False":
		return a
	case op == "&" && b == "False":
		return "False"
	case op == "|" && b == "True":
		return "True"
	case op == "^" && b == "True":
		return notText(a)
	}
	word := map[string]string{"&": " and ", "|": " or ", "^": " != "}[op]
	if op == "^" { // "not x != y" would read as "not (x != y)"
		return parenNot(a) + word + parenNot(b)
	}
	return paren(a) + word + paren(b)
}

func notText(a string) string {
	if strings.HasPrefix(a, "not ") && !strings.ContainsAny(a[4:], " ") {
		return a[4:]
	}
	return "not " + paren(a)
}

func parenNot(s string) string {
	if strings.HasPrefix(s, "not ") {
		return "(" + s + ")"
	}
	return paren(s)
}

func paren(s string) string {
	if strings.Contains(s, " and ") || strings.Contains(s, " or ") || strings.Contains(s, " != ") {
		return "(" + s + ")"
	}
	return s
}
