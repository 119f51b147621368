package symex

import (
	"context"
	"errors"
	"time"

	"github.com/dpperf/dpperf/smt"
)

// A lemma (lemma.go) refutes one path at a time: a path must be executed
// before its text can be compared. When the paths that share a core differ
// in choices that have nothing to do with it (a parser's case folding of
// every byte between a label's length and the end of the label), their
// number grows with the product of those choices, and the enumeration
// meets them one by one.
//
// A family is the set of every source-to-sink path that takes given edges
// in order, whatever it does between them. Family proves, with one solver
// check, that no path of the family can run, so that the enumeration can
// leave the whole family out. It executes one over-approximation of all
// of them: between two of the given edges (and before the first), the
// nodes that every path of the family passes are executed exactly, with
// the branch edges that every path takes; where the paths part and meet
// again (a region), everything a node of the region may write (registers,
// stack slots at constant offsets) is given a fresh unconstrained value and
// the region's branch conditions are dropped. Every path of the family is
// an instance of that execution, so when its conditions are contradictory,
// so are every path's. A region that may write memory other than its own
// stack at constant offsets, call a helper or a function, or exit is not
// over-approximated: Family then proves nothing.
//
// A family whose over-approximation is far from the first edge is made
// coarse (coarse in famplan.go), and a loop's iterations give each other's
// families (twins.go).

// familyRun executes the steps of a family: dead when a condition folds
// to false, else the SMT commands; ok is false when an execution the
// over-approximation cannot make stopped it.
func (c *Checker) familyRun(steps []famStep) (dead bool, lines []string, ok bool) {
	notes := map[string]bool{} // over-approximations are the point here
	var st *state
	names := 0
	for i, s := range steps {
		l, err := c.exec(st, names, notes, s, i)
		if isDead(err) {
			return true, nil, true
		}
		if err != nil {
			return false, nil, false
		}
		lines = append(lines, l.text...)
		st, names = l.st, l.names
	}
	return false, lines, true
}

// learnFolded looks for a family of a prefix that folded to false: the
// smallest window of its last edges (2, 4, 8, ... of them, at most half
// the prefix) whose family's over-approximation folds to false too. The contradiction of a folded
// prefix is usually local (a constant a branch tests), and every path with
// the window, whatever it did before, is then left out.
func (c *Checker) learnFolded(edges []int32) {
	ls := c.opts.Lemmas
	if ls == nil || !c.opts.Families {
		return
	}
	n := len(edges)
	last := edges[n-1]
	if c.foldMisses[last] >= maxFoldMisses {
		return
	}
	for j := 2; j <= n/2; j *= 2 {
		fam := edges[n-j:]
		if ls.hasFamily(fam) {
			return
		}
		for _, steps := range c.plans(fam) {
			if dead, _, _ := c.familyRun(steps); dead {
				ls.addFamily(fam)
				c.propose(fam, 1, -1)
				return
			}
		}
	}
	if c.foldMisses == nil {
		c.foldMisses = map[int32]int{}
	}
	c.foldMisses[last]++
}

// maxFoldMisses is how often learnFolded looks for a family of prefixes
// that fold at the same edge without finding one before it stops looking:
// a contradiction that depends on the whole path (a test of a value every
// earlier branch changed) has no family smaller than a path.
const maxFoldMisses = 3

// coarseKeep is how many steps before a family's first edge are executed
// exactly in its coarse over-approximation (see coarse).
const coarseKeep = 24

// plans lays out a family's over-approximations, coarse first (see
// coarse) and then, when it differs, the exact chain from the program's
// entry; none when the family's paths cannot be over-approximated.
func (c *Checker) plans(edges []int32) [][]famStep {
	if c.out == nil {
		c.out = c.g.OutEdges()
	}
	var out [][]famStep
	for _, keep := range []int{coarseKeep, 0} {
		steps, err := familyPlan(c.g, c.out, edges, keep)
		if err != nil || len(out) > 0 && len(steps) == len(out[0]) {
			continue
		}
		out = append(out, steps)
	}
	return out
}

// Family reports whether no path that takes edges (in order; the core of
// a refuted path) can run, by a check of the over-approximation of all of
// them within budget: first a coarse one (see coarse), then, when that
// proves nothing, the exact chain from the program's entry. False proves
// nothing.
func (c *Checker) Family(ctx context.Context, edges []int32, budget time.Duration) (bool, error) {
	if len(edges) == 0 {
		return false, nil
	}
	for _, steps := range c.plans(edges) {
		ok, err := c.proveSteps(ctx, steps, budget)
		if ok || err != nil {
			return ok, err
		}
	}
	return false, nil
}

// proveSteps executes a family's steps and checks their conditions.
func (c *Checker) proveSteps(ctx context.Context, steps []famStep, budget time.Duration) (bool, error) {
	dead, lines, ok := c.familyRun(steps)
	switch {
	case dead:
		return true, nil
	case !ok:
		return false, nil
	}
	if c.famSolver == nil {
		s, err := startSolver(c.opts, c.g.Maps)
		if err != nil {
			return false, err
		}
		c.famSolver = s
	}
	s := c.famSolver

	if err := s.Push(); err != nil {
		return false, err
	}
	if err := s.Send(lines...); err != nil {
		return false, err
	}
	c.Checks++
	r, err := s.CheckFor(ctx, budget)
	if errors.Is(err, smt.ErrStalled) {
		s.Close()
		c.famSolver = nil
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return r == smt.Unsat, s.Pop()
}
