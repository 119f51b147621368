package symex

import (
	"context"
	"fmt"

	"github.com/dpperf/dpperf/smt"
)

// The shortest packet that takes a path: a binary search over the packet
// length with the solver, and the bound the path's bounds checks give
// without it.

// leastLength searches the smallest packet length that takes the loaded
// path, from the length of the solver's model down; minimal is false when
// a solver timeout cut the search short, and kept is true when no check
// was needed, so that the solver still holds the model (of length hi).
func (c *Checker) leastLength(ctx context.Context, st *state) (hi uint64, minimal, kept bool, err error) {
	vals, err := c.s.Values([]string{"len"})
	if err != nil {
		return 0, false, false, c.stalled(err, len(c.levels)) // stalled: no example
	}
	hi, err = parseUint(vals[0])
	if err != nil {
		return 0, false, false, err
	}
	// The lengths below the path's interval are refuted already: a path
	// whose bounds checks are at constant offsets needs no search.
	lo := uint64(max(int64(c.opts.MinPacket), st.lens.lo))
	minimal, kept = true, lo >= hi
	for first := true; lo < hi; first = false {
		mid := lo + (hi-lo)/2
		if first {
			mid = lo // most often the path's least length is its answer
		}
		res, err := c.within(ctx, fmt.Sprintf("(bvule len %s)", konst(64, mid).s))
		if err != nil {
			return 0, false, false, err
		}
		switch res {
		case smt.Sat:
			hi = mid
		case smt.Unsat:
			lo = mid + 1
		default:
			lo, minimal = mid+1, false
		}
	}
	return hi, minimal, kept, nil
}

// within checks the path's assertions plus one more, in a scope of its own.
func (c *Checker) within(ctx context.Context, extra string) (smt.Result, error) {
	if err := c.s.Push(); err != nil {
		return smt.Unknown, err
	}
	if err := c.s.Send("(assert " + extra + ")"); err != nil {
		return smt.Unknown, err
	}
	s := c.s
	res, err := c.checkAt(ctx, len(c.levels), c.opts.Solver.Timeout)
	if c.s == s { // not restarted
		if perr := c.s.Pop(); err == nil {
			err = perr
		}
	}
	c.model = -1 // a pop discards the model
	return res, err
}

// Shorter says whether the loaded path runs with a packet of fewer than n
// bytes. Hashes stay free, so Unsat is definite and Sat may not be.
func (c *Checker) Shorter(ctx context.Context, n int) (smt.Result, error) {
	if len(c.levels) == 0 {
		return smt.Unknown, fmt.Errorf("no path loaded")
	}
	if int64(n) <= c.levels[len(c.levels)-1].st.lens.lo {
		return smt.Unsat, nil // the path's bounds checks need more
	}
	if err := c.solverAt(len(c.levels)); err != nil {
		return smt.Unknown, err
	}
	return c.within(ctx, fmt.Sprintf("(bvult len %s)", konst(64, uint64(n)).s))
}

// LeastLength loads edges and returns the least packet length their
// bounds checks allow, without the solver; false when the path could not
// be loaded (a prefix that folds to false, which Check then reports).
func (c *Checker) LeastLength(edges []int32) (int64, bool) {
	if err := c.load(context.Background(), edges); err != nil || len(c.levels) == 0 {
		return 0, false
	}
	return c.levels[len(c.levels)-1].st.lens.lo, true
}
