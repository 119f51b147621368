package symex

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/dpperf/dpperf/smt"
)

// Abstracted values (hashes): which of them the path's conditions use, and
// solving with their exact definitions for an example.

// comments lists the fields of the loaded path's "; @kind ..." comments,
// in order.
func (c *Checker) comments(kind string) [][]string {
	var out [][]string
	for _, l := range c.levels {
		for _, line := range l.text {
			if rest, ok := strings.CutPrefix(line, "; @"+kind+" "); ok {
				out = append(out, strings.Fields(rest))
			}
		}
	}
	return out
}

// abstractionsConstrain reports whether an assertion of the loaded path,
// or its verdict, uses a value the executor abstracted (a hash, or any
// result of more than maxOps operations), directly or through the
// definitions. A transcoder whose computed bytes only go into the packet
// does not: whatever values the solver gives them, the same packet takes
// the path, so solving with their exact definitions (which can take the
// solver longer than any timeout) is not needed.
func (c *Checker) abstractionsConstrain(st *state) bool {
	w := c.window(len(c.levels))
	var roots []string
	for _, text := range w.levels {
		for _, line := range text {
			if strings.HasPrefix(line, "(assert ") {
				roots = append(roots, line)
			}
		}
	}
	if st.exited {
		roots = append(roots, st.verdict.s)
	}
	need := uses(roots, w.body)
	for _, f := range c.comments("abstract") {
		if need[f[0]] {
			return true
		}
	}
	return false
}

// abstractions lists the equalities between the loaded path's abstracted
// values and their exact definitions.
func (c *Checker) abstractions() []string {
	var eqs []string
	for _, f := range c.comments("abstract") {
		eqs = append(eqs, "(= "+f[0]+" "+f[1]+")")
	}
	return eqs
}

// exact asserts, in a scope of its own, the equalities eqs between the
// loaded path's abstracted values and their definitions, and checks them
// (ten times the per-path timeout, at least 10 s, but smt.CheckFor keeps
// a check within the solver's own timeout when it has one: z3 inverting
// a hash rarely finishes, see pinnedExample). It reports whether the scope
// stays: true when the exact path is satisfiable. ErrHashRefuted says it
// is not; false without error means there is nothing to make exact, or
// the solver could not tell, and the model is the abstract one.
//
// Equalities the solver could not decide in time on one path are not
// tried again on another: the paths of a program that test a hash share
// its definition, and solving for it fails alike on each (Katran's flow
// hash, tested against a constant, cost 2 s on each of some 70 paths).
// Those examples stay approximate (Uninverted counts them).
func (c *Checker) exact(ctx context.Context, eqs []string) (bool, error) {
	if len(eqs) == 0 {
		return false, nil
	}
	n, key := len(c.levels), strings.Join(eqs, " ")
	if c.uninverted[key] {
		c.Uninverted++
		return false, c.abstractModel(ctx, n)
	}
	if err := c.s.Push(); err != nil {
		return false, err
	}
	if err := c.s.Send("(assert (and " + key + "))"); err != nil {
		return false, err
	}
	s := c.s
	res, err := c.checkAt(ctx, n, max(10*c.opts.Solver.Timeout, 10*time.Second))
	if err != nil || res == smt.Sat {
		return res == smt.Sat, err
	}
	if c.s == s {
		if err := c.s.Pop(); err != nil {
			return false, err
		}
	}
	if res == smt.Unsat {
		return false, ErrHashRefuted
	}
	// Unknown: back to the abstract model.
	if ctx.Err() == nil {
		if c.uninverted == nil {
			c.uninverted = map[string]bool{}
		}
		c.uninverted[key] = true
	}
	return false, c.abstractModel(ctx, n)
}

// abstractModel checks the first n levels again for a model with the
// hashes free, after a check that replaced it.
func (c *Checker) abstractModel(ctx context.Context, n int) error {
	res, err := c.checkAt(ctx, n, 0)
	if err == nil && res != smt.Sat {
		err = fmt.Errorf("the path's abstract check gave %v after a satisfiable one", res)
	}
	return err
}
