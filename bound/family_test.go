package bound

import (
	"context"
	"testing"
)

// In explode_far the two branches of each contradictory pair lie 32
// branches apart, so the graph that leaves the learnt pairs out of the
// enumeration grows past its cap (2^32 open pairs). The search then meets
// paths that take a learnt pair and decides each, impossible, itself:
// almost every path is refuted without a worker or the solver.
func TestFamiliesBeyondTheProduct(t *testing.T) {
	c := costed(t, "explode_far", "nfp-agilio-cx")
	r, err := SSP(context.Background(), c, SearchOptions{Workers: 1, MaxChecks: 2000})
	if err != nil {
		t.Fatal(err)
	}
	s := r.Search
	if r.Kind != "intermediate" || s.Checked != 2000 || s.Refuted != s.Checked {
		t.Fatalf("%s after %d paths, %d refuted: want 2000 paths, all impossible", r.Kind, s.Checked, s.Refuted)
	}
	if s.ByFamily < 1900 || s.Solver > 100 {
		t.Errorf("%d paths refuted by a family, %d solver checks: want nearly all without the solver", s.ByFamily, s.Solver)
	}
	if r.Naive == nil || r.Bound.PathRate < r.Naive.PathRate {
		t.Errorf("intermediate bound %g below the naive %v", r.Bound.PathRate, r.Naive)
	}
	// Without the families every path goes to a worker.
	r2, err := SSP(context.Background(), c, SearchOptions{Workers: 1, MaxChecks: 200, NoFamilies: true})
	if err != nil {
		t.Fatal(err)
	}
	if r2.Search.ByFamily != 0 {
		t.Errorf("NoFamilies: %d paths refuted by a family", r2.Search.ByFamily)
	}
}
