package bound

import (
	"context"
	"errors"

	"github.com/dpperf/dpperf/smt"
	"github.com/dpperf/dpperf/symex"
)

// A worker's part of the SSP search: deciding one dispatched path.

// check decides one dispatched path on checker ch into v.
func check(limit context.Context, ch *symex.Checker, j job, v *verdict) {
	if needsLonger(ch, j) {
		// Its bounds checks need packets too long to lower
		// the bound, whether it can run or not.
		v.out, v.larger = symex.Outcome{Result: smt.Sat, Prefix: len(j.path.Edges)}, true
		return
	}
	v.out, v.err = ch.Check(limit, j.path.Edges)
	if v.err == nil && v.out.Result == smt.Sat && j.below > 0 {
		// Unsat with hashes left free stays unsat with
		// their exact values: the path cannot lower the bound.
		var res smt.Result
		res, v.err = ch.Shorter(limit, j.below)
		v.larger = res == smt.Unsat
	}
	if v.err == nil && v.out.Result == smt.Sat && !v.larger {
		v.example, v.err = ch.Example(limit)
		if errors.Is(v.err, symex.ErrHashRefuted) {
			// Possible only with free hashes: refuted, no
			// prefix pruned.
			v.out, v.err = symex.Outcome{Result: smt.Unsat, Prefix: len(j.path.Edges)}, nil
		}
	}
}

// needsLonger reports whether j's path, by its own bounds checks, needs a
// packet too long to lower the best bit rate (job.below), without the
// solver.
func needsLonger(ch *symex.Checker, j job) bool {
	if j.below == 0 {
		return false
	}
	n, ok := ch.LeastLength(j.path.Edges)
	return ok && n >= int64(j.below)
}
