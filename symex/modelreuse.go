package symex

import (
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/dpperf/dpperf/smt"
)

// Reuse of models: the model of the solver's last check decides a longer
// prefix when the prefix's pending SMT text, re-read as one expression,
// evaluates to true in it (see byModel).

// maxModelText caps the SMT text byModel sends in one evaluation.
const maxModelText = 1 << 16

// byModel reports whether the model of the solver's last check, which
// covers a shorter prefix, satisfies the first n levels: the assertions of
// the levels the solver has not received are evaluated in it (a constant
// declared there, which no earlier condition constrains, takes a fixed
// value of its sort, see zeroOf), in Go where it can (evalByModel), else
// by the solver. A true answer proves the prefix satisfiable without a
// check; false decides nothing.
func (c *Checker) byModel(n int) (bool, error) {
	if c.model < 0 || c.inSolver != c.model || c.model > n {
		return false, nil
	}
	ok, err := c.evalByModel(n)
	switch {
	case err == nil:
		if ok {
			c.ByModel++
		}
		return ok, nil
	case errors.Is(err, smt.ErrStalled):
		return false, c.stalled(err, c.inSolver)
	}
	c.EvalFallbacks++
	return c.byModelSolver(n)
}

// byModelSolver is byModel by the solver: the pending levels are written
// as one let-expression and evaluated.
func (c *Checker) byModelSolver(n int) (bool, error) {
	// The pending levels' definitions, and the ones the assertions need.
	type def struct {
		order int
		bind  string // "(name expr)"
		expr  string
	}
	defs := map[string]def{}
	var asserts []string
	size := 0
	for _, l := range c.levels[c.model:n] {
		for _, line := range l.text {
			switch {
			case strings.HasPrefix(line, "(define-fun "):
				f := strings.SplitN(line[len("(define-fun "):len(line)-1], " ", 3) // name, "()", sort and expression
				expr := f[2][sortLen(f[2]):]
				defs[f[0]] = def{len(defs), "(" + f[0] + expr + ")", expr}
			case strings.HasPrefix(line, "(declare-const "):
				name, sort, _ := strings.Cut(line[len("(declare-const "):len(line)-1], " ")
				defs[name] = def{len(defs), "(" + name + " " + zeroOf(sort) + ")", ""}
			case strings.HasPrefix(line, "(assert "):
				asserts = append(asserts, line[len("(assert "):len(line)-1])
			}
		}
	}
	if len(asserts) == 0 {
		return true, nil
	}
	need := uses(asserts, func(name string) (string, bool) {
		d, ok := defs[name]
		return d.expr, ok
	})
	for name := range need {
		size += len(defs[name].bind)
	}
	if size > maxModelText {
		return false, nil
	}
	binds := make([]def, 0, len(need))
	for name := range need {
		binds = append(binds, defs[name])
	}
	slices.SortFunc(binds, func(a, b def) int { return a.order - b.order })
	var b strings.Builder
	for _, d := range binds {
		b.WriteString("(let (" + d.bind + ")")
	}
	b.WriteString("(and true " + strings.Join(asserts, " ") + ")")
	b.WriteString(strings.Repeat(")", len(binds)))
	ok, err := c.s.Holds(b.String())
	if err != nil {
		return false, c.stalled(err, c.inSolver)
	}
	if ok {
		c.ByModel++
	}
	return ok, err
}

// sortLen is the length of the sort at the start of text (an atom or a
// parenthesised sort).
func sortLen(text string) int {
	if !strings.HasPrefix(text, "(") {
		i := strings.IndexByte(text, ' ')
		if i < 0 {
			return len(text)
		}
		return i
	}
	if i := smt.Closing(text); i >= 0 {
		return i + 1
	}
	return len(text)
}

// zeroOf is a value of a sort: false, a zero bit-vector, or for a byte
// array the received packet's bytes.
func zeroOf(sort string) string {
	switch {
	case sort == "Bool":
		return "false"
	case sort == arraySort:
		return "pkt0" // any array will do; QF_AUFBV has no constant arrays
	case strings.HasPrefix(sort, "(_ BitVec "):
		w, _ := strconv.Atoi(strings.TrimSuffix(sort[len("(_ BitVec "):], ")"))
		return konst(uint16(w), 0).s
	}
	return sort // not a sort we declare: the evaluation fails loudly
}

// satByModel reports whether the first n levels are known satisfiable or
// the model of the last check, or the witness (repaired, with repair),
// satisfies them, and records it.
func (c *Checker) satByModel(n int, repair bool) (bool, error) {
	if c.knownSat >= n {
		return true, nil
	}
	ok, err := c.byModel(n)
	if err == nil && !ok {
		ok = c.byWitness(n, repair)
	}
	if ok {
		c.knownSat = n
	}
	return ok, err
}
