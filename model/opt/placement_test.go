package opt

import (
	"context"
	"fmt"
	"testing"

	"github.com/dpperf/dpperf/model/analytic"
	"github.com/dpperf/dpperf/model/flow"
	"github.com/dpperf/dpperf/model/spec"
)

// The NF-placement case study: the optimizer offloads an NF when the
// accelerator at that packet size relieves the cores more than it costs,
// so the chain's placement depends on the packet size, as in §4.5 of the
// LogNIC document. A brute force over all 16 placements agrees, and the
// chosen placement beats both the cores-only and the accelerator-first
// placement.
func TestNFPlacement(t *testing.T) {
	nfs := []string{"fw", "lb", "nat", "pe"}
	cases := []struct {
		size float64
		want []float64 // placement of fw, lb, nat, pe
	}{
		// Small packets: the crypto accelerator (0.8 Gbit/s at 64 B) is
		// slower than PE on the cores beside DPI; the other NFs move off
		// the cores, which DPI and PE then bind.
		{64, []float64{1, 1, 1, 0}},
		// Large packets: every NF that can leaves the cores; DPI alone
		// binds them.
		{1500, []float64{1, 1, 1, 1}},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%gB", c.size), func(t *testing.T) {
			s, err := spec.Load("../../examples/model/nf-placement/spec.yaml")
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Set("size", c.size); err != nil {
				t.Fatal(err)
			}
			p := &Problem{Model: flow.FromSpec(s), Objective: MaxThroughput}
			for _, nf := range nfs {
				p.Vars = append(p.Vars, Var{Param: spec.Param("chain." + nf + ".placement"), Lo: 0, Hi: 1, Integer: true})
			}
			sol, err := Solve(context.Background(), p)
			if err != nil {
				t.Fatal(err)
			}
			// Brute force straight through the model, not through Problem.
			thr := func(x []float64) float64 {
				c := s.Clone()
				for i, nf := range nfs {
					if err := c.Set(spec.Param("chain."+nf+".placement"), x[i]); err != nil {
						t.Fatal(err)
					}
				}
				n, err := flow.Compile(c)
				if err != nil {
					t.Fatal(err)
				}
				v, _ := analytic.NewEvaluator(n).Throughput()
				return v
			}
			var best []float64
			bestT := 0.0
			for k := range 16 {
				x := []float64{float64(k >> 3 & 1), float64(k >> 2 & 1), float64(k >> 1 & 1), float64(k & 1)}
				if v := thr(x); v > bestT*(1+1e-12) {
					best, bestT = x, v
				}
			}
			if fmt.Sprint(sol.Values) != fmt.Sprint(best) || fmt.Sprint(best) != fmt.Sprint(c.want) {
				t.Errorf("optimizer %v, brute force %v, want %v", sol.Values, best, c.want)
			}
			cores, accel := thr([]float64{0, 0, 0, 0}), thr([]float64{1, 1, 1, 1})
			t.Logf("best %.3f Gbit/s, cores only %.3f, accelerators first %.3f", bestT*8/1e9, cores*8/1e9, accel*8/1e9)
			if c.size == 64 && !(bestT > 1.4*cores && bestT > 1.6*accel) {
				t.Errorf("small packets: best %g not well above cores-only %g and accelerator-first %g", bestT, cores, accel)
			}
			if c.size == 1500 && !(bestT == accel && bestT > 5*cores) {
				t.Errorf("large packets: best %g, accelerator-first %g, cores-only %g", bestT, accel, cores)
			}
		})
	}
}
