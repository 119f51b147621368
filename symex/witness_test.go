package symex

import (
	"context"
	"testing"

	"github.com/dpperf/dpperf/internal/testobj"
	"github.com/dpperf/dpperf/smt"
)

// TestWitnessNeverContradictsSolver walks the first branches of Katran's
// balancers and, at every prefix, asks the witness (repaired where it
// can be) and then the solver: a prefix the witness proves satisfiable is
// never one the solver refutes, and the witness decides a good share of
// the prefixes the solver finds satisfiable.
func TestWitnessNeverContradictsSolver(t *testing.T) {
	ctx := context.Background()
	for _, prog := range []string{"balancer_ingress_v4", "balancer_ingress_v6"} {
		t.Run(prog, func(t *testing.T) {
			g := graphOf(t, testobj.Built(t, "test_xdp_noinline"), prog)
			c, err := NewChecker(g, Options{MinPacket: 14})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			sat, byWitness := 0, 0
			walkPrefixes(t, c, g, 1500, func(p []int32) smt.Result {
				n := len(p)
				proven := c.byWitness(n, true)
				res, err := c.checkAt(ctx, n, 0)
				if err != nil {
					t.Fatal(err)
				}
				if proven && res == smt.Unsat {
					t.Fatalf("prefix of %d edges: the witness satisfies it, the solver refutes it", n)
				}
				if res == smt.Sat {
					sat++
					if proven {
						byWitness++
					}
				}
				return res
			})
			t.Logf("%d satisfiable prefixes, %d proven by the witness (%d repaired)", sat, byWitness, c.Repaired)
			if sat < 100 || byWitness < sat/2 || c.Repaired == 0 {
				t.Errorf("%d satisfiable prefixes, %d proven by the witness, %d repaired: the witness decides too little", sat, byWitness, c.Repaired)
			}
		})
	}
}
