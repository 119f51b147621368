package symex

import (
	"context"
	"slices"
	"testing"

	"github.com/dpperf/dpperf/cfg"
	"github.com/dpperf/dpperf/internal/testobj"
	"github.com/dpperf/dpperf/smt"
)

// TestModelEvaluationAgreesWithSolver walks the first branches of Katran's
// balancer (map lookups, 320-bit keys, packet arrays) and, wherever the
// model of the last check could decide a longer prefix, evaluates the
// prefix both in Go and by the solver: the answers must be the same.
func TestModelEvaluationAgreesWithSolver(t *testing.T) {
	ctx := context.Background()
	g := graphOf(t, testobj.Built(t, "test_xdp_noinline"), "balancer_ingress_v4")
	c, err := NewChecker(g, Options{MinPacket: 14})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	compared, held := 0, 0
	walkPrefixes(t, c, g, 10000, func(p []int32) smt.Result {
		if n := len(p); c.model >= 0 && c.inSolver == c.model && c.model < n {
			inGo, err := c.evalByModel(n)
			if err != nil {
				t.Logf("not evaluated in Go: %v", err)
			}
			bySolver, serr := c.byModelSolver(n)
			if serr != nil {
				t.Fatal(serr)
			}
			if err == nil {
				compared++
				if inGo {
					held++
				}
				if inGo != bySolver {
					t.Errorf("prefix of %d edges (model of %d): %v in Go, %v by the solver", n, c.model, inGo, bySolver)
				}
			}
		}
		res, _, err := c.Extend(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		return res
	})
	t.Logf("%d evaluations compared, %d true", compared, held)
	if compared < 100 || held == 0 || held == compared {
		t.Errorf("%d evaluations compared, %d true: too few to tell", compared, held)
	}
}

// walkPrefixes loads the prefixes of g's paths depth first, at most
// budget edges in all, and calls visit on each live one; a prefix visit
// finds unsatisfiable is not extended.
func walkPrefixes(t *testing.T, c *Checker, g *cfg.Graph, budget int, visit func(p []int32) smt.Result) {
	t.Helper()
	out := g.OutEdges()
	var walk func(prefix []int32, node cfg.NodeID)
	walk = func(prefix []int32, node cfg.NodeID) {
		for _, e := range out[node] {
			if budget--; budget < 0 {
				return
			}
			p := append(slices.Clip(prefix), e)
			if err := c.load(context.Background(), p); isDead(err) {
				continue
			} else if err != nil {
				t.Fatal(err)
			}
			if visit(p) != smt.Unsat && g.Edges[e].To != g.Sink {
				walk(p, g.Edges[e].To)
			}
		}
	}
	walk(nil, g.Source)
}
