package bound

import (
	"math"
	"testing"

	"github.com/cilium/ebpf/asm"

	"github.com/dpperf/dpperf/cfg"
	"github.com/dpperf/dpperf/target"
)

func TestChainCostsKnownAnswers(t *testing.T) {
	const thr, alu, load, stack = 0.25, 1.0, 2.0, 0.5
	tg := &target.Target{Chain: map[string]target.Vec{"alu64": {alu}, target.ChainLoad: {load}, target.ChainStack: {stack}}}
	for _, tc := range []struct {
		name  string
		insns asm.Instructions
		added float64 // the chain's latency, on top of the throughput sum
	}{
		{"independent", asm.Instructions{asm.Add.Reg(asm.R1, asm.R2), asm.Add.Reg(asm.R3, asm.R2), asm.Add.Reg(asm.R4, asm.R2)}, alu},
		{"chain of three", asm.Instructions{asm.Add.Reg(asm.R1, asm.R2), asm.Add.Reg(asm.R1, asm.R2), asm.Add.Reg(asm.R1, asm.R2),
			asm.Add.Reg(asm.R3, asm.R2)}, 3 * alu},
		{"through the source", asm.Instructions{asm.Add.Reg(asm.R1, asm.R2), asm.Mov.Reg(asm.R3, asm.R1), asm.Add.Reg(asm.R4, asm.R3)}, 3 * alu},
		{"mov breaks it", asm.Instructions{asm.Add.Reg(asm.R1, asm.R2), asm.Mov.Imm(asm.R1, 0), asm.Add.Reg(asm.R1, asm.R2)}, 2 * alu},
		{"header walk", asm.Instructions{asm.LoadMem(asm.R2, asm.R7, 0, asm.Byte), asm.LSh.Imm(asm.R2, 3), asm.Add.Reg(asm.R2, asm.R7),
			asm.LoadMem(asm.R3, asm.R2, 0, asm.Byte)}, 2*load + alu}, // shift64 has no chain price
		{"stack slot", asm.Instructions{asm.Add.Reg(asm.R1, asm.R2), asm.StoreMem(asm.R10, -8, asm.R1, asm.DWord),
			asm.LoadMem(asm.R3, asm.R10, -8, asm.DWord), asm.Add.Reg(asm.R3, asm.R2)}, 2*alu + stack},
		{"an old stack slot", asm.Instructions{asm.LoadMem(asm.R3, asm.R10, -8, asm.DWord), asm.Add.Reg(asm.R3, asm.R2)}, alu},
		{"a call ends chains", asm.Instructions{asm.Add.Reg(asm.R6, asm.R2), asm.Add.Reg(asm.R6, asm.R2), asm.FnKtimeGetNs.Call(),
			asm.Add.Reg(asm.R6, asm.R2)}, 2 * alu},
	} {
		t.Run(tc.name, func(t *testing.T) {
			per := make([]target.Vec, len(tc.insns))
			for i := range per {
				per[i] = target.Vec{thr}
			}
			added := chainCosts(tg, tc.insns, 0, len(tc.insns)-1, false, per)
			if math.Abs(added[0]-tc.added) > 1e-9 {
				t.Errorf("added %g, want %g", added[0], tc.added)
			}
			total := 0.0
			for _, v := range per {
				total += v[0]
			}
			if want := float64(len(tc.insns))*thr + tc.added; math.Abs(total-want) > 1e-9 {
				t.Errorf("instructions sum to %g, want %g", total, want)
			}
		})
	}
}

// TestChainAddsToEveryEdge: under a target with a chain section every
// edge costs its throughput sum plus a non-negative chain, the per-line
// breakdown still adds up to the edge, and a program whose blocks hold
// dependent instructions costs more on some edge.
func TestChainAddsToEveryEdge(t *testing.T) {
	plain := mustTarget(t, "x86-64")
	chained := *plain
	chained.Chain = map[string]target.Vec{"alu64": {1}, "alu32": {1}, "shift64": {1}, "swap": {1}, target.ChainLoad: {4}}
	for _, name := range []string{"parser", "flowtable", "loop"} {
		g := graphOf(t, name)
		a, b := Cost(g, plain), Cost(g, &chained)
		more := false
		for e := range g.Edges {
			if b.Edge[e][0] < a.Edge[e][0]-1e-9 {
				t.Fatalf("%s: edge %d costs %g with chains, %g without", name, e, b.Edge[e][0], a.Edge[e][0])
			}
			more = more || b.Edge[e][0] > a.Edge[e][0]+0.5
		}
		if !more {
			t.Errorf("%s: no edge pays for a chain", name)
		}
		checked := 0
		for n := range g.Nodes {
			sum := 0.0
			for _, v := range b.insn[n] {
				sum += v[0]
			}
			out := g.OutEdges()[n]
			if len(out) == 0 || g.Edges[out[0]].Kind != cfg.EdgeFall {
				continue
			}
			if math.Abs(sum-b.Edge[out[0]][0]) > 1e-6 {
				t.Errorf("%s: node %d: instructions sum to %g, its edge costs %g", name, n, sum, b.Edge[out[0]][0])
			}
			checked++
		}
		if checked == 0 {
			t.Errorf("%s: no block falls through: nothing to add up", name)
		}
	}
}
