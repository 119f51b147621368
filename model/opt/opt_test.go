package opt

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/dpperf/dpperf/model/flow"
	"github.com/dpperf/dpperf/model/queue"
	"github.com/dpperf/dpperf/model/spec"
)

func load(t testing.TB, y string) *spec.Spec {
	t.Helper()
	s, err := spec.Read(strings.NewReader(y), "t.yml")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Two stages share one IP through partitions; stage w moves three times
// the bytes of stage v. The best split gives v a quarter: both then
// saturate at 0.25·P.
func TestPartitionsKnownOptimum(t *testing.T) {
	s := load(t, `
hardware:
  ips: [{name: a, throughput: 8Gbit/s, parallelism: 4}]
software:
  graphs:
    - name: g
      vertices: [{name: v, ip: a, partition: 0.5}, {name: w, ip: a, partition: 0.5}]
      edges: [{from: ingress, to: v}, {from: v, to: w, delta: 3}, {from: w, to: egress}]
traffic: {ingress: 1Gbit/s, size: 1000B}
`)
	p := &Problem{Model: flow.FromSpec(s), Objective: MaxThroughput, Simplex: [][]int{{0, 1}},
		Vars: []Var{{Param: "g.v.partition", Lo: 0, Hi: 1}, {Param: "g.w.partition", Lo: 0, Hi: 1}}}
	sol, err := Solve(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(sol.Values[0]-0.25) > 1e-3 || math.Abs(sol.Throughput-0.25e9) > 1e-3*0.25e9 {
		t.Errorf("got %v throughput %v, want v=0.25 and 2Gbit/s", sol.Values, sol.Throughput)
	}
}

// Case study 1: the fewest submission cores that reach the accelerator's
// throughput; brute force over the same space agrees.
func TestEchoCores(t *testing.T) {
	s, err := spec.Load("../../examples/model/echo-accel/spec.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s.Traffic.Ingress = 25e9 / 8
	p := &Problem{Model: flow.FromSpec(s), Objective: MaxThroughput, Vars: []Var{{Param: "echo.submit.parallelism", Lo: 1, Hi: 15, Integer: true}}}
	sol, err := Solve(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if sol.Values[0] != 7 || sol.Bottleneck != "ip:md5" {
		t.Errorf("cores %v bottleneck %s, want 7 and ip:md5", sol.Values[0], sol.Bottleneck)
	}
	bestD, bestT := 0.0, 0.0
	for d := 1.0; d <= 15; d++ {
		pt, err := p.Evaluate([]float64{d})
		if err == nil && pt.Throughput > bestT*(1+1e-9) {
			bestD, bestT = d, pt.Throughput
		}
	}
	if bestD != sol.Values[0] {
		t.Errorf("brute force %v, optimizer %v", bestD, sol.Values[0])
	}
}

// oneQueue is one vertex with a queue of 8 on an 8 Gbit/s IP, offered
// 5.6 Gbit/s (ρ = 0.7).
const oneQueue = `
hardware:
  ips: [{name: a, throughput: 8Gbit/s, parallelism: 1}]
software:
  graphs:
    - name: g
      vertices: [{name: v, ip: a, parallelism: 1, queue: 8}]
      edges: [{from: ingress, to: v}, {from: v, to: egress}]
traffic: {ingress: 5.6Gbit/s, size: 1000B}
`

// Credit sizing: the smallest queue whose drop share stays under 0.1%
// is the smallest N with P_N(ρ, N) ≤ 0.001.
func TestMinCredits(t *testing.T) {
	s := load(t, oneQueue)
	p := &Problem{Model: flow.FromSpec(s), Objective: MinResources, MaxDrop: 1e-3, Vars: []Var{{Param: "g.v.queue", Lo: 1, Hi: 64, Integer: true}}}
	sol, err := Solve(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	want := 1.0
	for queue.Block(0.7, want) > 1e-3 {
		want++
	}
	if sol.Values[0] != want || !sol.Feasible {
		t.Errorf("credits %v (feasible %v), want %v", sol.Values[0], sol.Feasible, want)
	}
}

// Traffic steering (case study 5, scenario 2): accelerators with rates
// 4:7:3; 20% of the bytes go to the first, X to the second, the rest to
// the third. The continuous optimum of the mean latency matches a fine
// brute-force scan.
func TestSteeringAgainstBruteForce(t *testing.T) {
	s := load(t, `
hardware:
  ips:
    - {name: a1, throughput: 4Gbit/s, queue: 64}
    - {name: a2, throughput: 7Gbit/s, queue: 64}
    - {name: a3, throughput: 3Gbit/s, queue: 64}
software:
  graphs:
    - {name: g1, weight: 0.2, vertices: [{name: v, ip: a1}], edges: [{from: ingress, to: v}, {from: v, to: egress}]}
    - {name: g2, weight: 0.4, vertices: [{name: v, ip: a2}], edges: [{from: ingress, to: v}, {from: v, to: egress}]}
    - {name: g3, weight: 0.4, vertices: [{name: v, ip: a3}], edges: [{from: ingress, to: v}, {from: v, to: egress}]}
traffic: {ingress: 8Gbit/s, size: 512B}
`)
	p := &Problem{Model: flow.FromSpec(s), Objective: MinLatency, Vars: []Var{{Param: "g2.weight", Lo: 0.01, Hi: 0.79}}}
	// g3.weight follows as 0.8 - X through a wrapper problem.
	eval := func(x float64) Point {
		c := s.Clone()
		_ = c.Set("g3.weight", 0.8-x)
		q := *p
		q.Model = flow.FromSpec(c)
		pt, _ := q.Evaluate([]float64{x})
		return pt
	}
	bestX, bestL := 0.0, math.Inf(1)
	for x := 0.01; x <= 0.79; x += 0.0005 {
		if l := eval(x).Latency; l < bestL {
			bestX, bestL = x, l
		}
	}
	// Solve with both weights as a simplex-free pair: fix g1 and let
	// the optimizer choose g2 with g3 tied to it.
	s2 := s.Clone()
	p2 := &Problem{Model: flow.FromSpec(s2), Objective: MinLatency, Simplex: [][]int{{0, 1, 2}},
		Vars: []Var{{Param: "g1.weight", Lo: 0, Hi: 1}, {Param: "g2.weight", Lo: 0, Hi: 1}, {Param: "g3.weight", Lo: 0, Hi: 1}}}
	sol, err := Solve(context.Background(), p2)
	if err != nil {
		t.Fatal(err)
	}
	// The free optimum (g1 not fixed at 0.2) is at least as good as the scan.
	if sol.Latency > bestL*(1+1e-3) {
		t.Errorf("optimizer latency %v above brute force %v (x=%v)", sol.Latency, bestL, bestX)
	}
	// The free optimum steers in proportion to capacity, leaning towards
	// the faster accelerator: its share exceeds 7/14.
	if sol.Values[1] < 0.5 {
		t.Errorf("shares %v: expected the 7-unit accelerator to get more than half", sol.Values)
	}
}

func BenchmarkOptimizeEcho(b *testing.B) {
	s, err := spec.Load("../../examples/model/echo-accel/spec.yaml")
	if err != nil {
		b.Fatal(err)
	}
	p := &Problem{Model: flow.FromSpec(s), Objective: MaxThroughput, Vars: []Var{{Param: "echo.submit.parallelism", Lo: 1, Hi: 15, Integer: true}}}
	for b.Loop() {
		if _, err := Solve(context.Background(), p); err != nil {
			b.Fatal(err)
		}
	}
}

// TestMinResourcesNeedsAConstraint: with nothing to meet, the fewest
// resources always win; the problem is refused instead of answered.
func TestMinResourcesNeedsAConstraint(t *testing.T) {
	s := load(t, oneQueue)
	p := &Problem{Model: flow.FromSpec(s), Objective: MinResources, Vars: []Var{{Param: "g.v.queue", Lo: 1, Hi: 64, Integer: true}}}
	if _, err := Solve(context.Background(), p); err == nil || !strings.Contains(err.Error(), "--min-throughput, --max-drop or --latency-bound") {
		t.Fatalf("Solve without a constraint: %v", err)
	}
	p.MinThroughput = 1
	if _, err := Solve(context.Background(), p); err != nil {
		t.Fatalf("with a constraint: %v", err)
	}
}
