package bound

import (
	"context"
	"testing"

	"github.com/cilium/ebpf/asm"

	"github.com/dpperf/dpperf/bpfprog"
	"github.com/dpperf/dpperf/cfg"
	"github.com/dpperf/dpperf/internal/testobj"
	"github.com/dpperf/dpperf/target"
)

// nfpGraph loads example name's graph and the nfp-agilio-cx target.
func nfpGraph(t *testing.T, name string) (*cfg.Graph, *target.Target) {
	t.Helper()
	p, err := bpfprog.LoadFile(testobj.Built(t, name), "")
	if err != nil {
		t.Fatal(err)
	}
	g, err := cfg.Build(p, cfg.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tg, err := target.Load("nfp-agilio-cx")
	if err != nil {
		t.Fatal(err)
	}
	return g, tg
}

func nfpNaive(t *testing.T, name string) *Result {
	t.Helper()
	g, tg := nfpGraph(t, name)
	r, err := Naive(context.Background(), Cost(g, tg), 1)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// The paper found the DRAM engine the bottleneck of Count-Min with 10 or
// more rows; with 20 atomic adds per packet it serves 800e6 / (20 ×
// 3.2198) packets/s.
func TestCountMinDRAMBound(t *testing.T) {
	r := nfpNaive(t, "countmin20")
	if r.Bound.Bottleneck != "dram" {
		t.Errorf("bottleneck %s, want dram", r.Bound.Bottleneck)
	}
	if want := 800e6 / (20 * 3.219818925010342); r.Bound.PathRate < want*0.999 || r.Bound.PathRate > want*1.001 {
		t.Errorf("path rate %g, want %g", r.Bound.PathRate, want)
	}
	if r5 := nfpNaive(t, "countmin"); r5.Bound.Bottleneck != "cores" {
		t.Errorf("countmin (5 rows): bottleneck %s, want cores", r5.Bound.Bottleneck)
	}
}

// The JIT's instruction count covers the whole program and each path.
func TestTargetInstructions(t *testing.T) {
	r := nfpNaive(t, "countmin")
	if r.TargetInstructions < r.Program.Instructions {
		t.Errorf("target instructions %d, fewer than the %d BPF instructions", r.TargetInstructions, r.Program.Instructions)
	}
	p := r.Paths[0]
	if p.TargetInstructions <= p.Instructions || p.TargetInstructions > r.TargetInstructions {
		t.Errorf("path: %d target instructions for %d BPF instructions, program %d", p.TargetInstructions, p.Instructions, r.TargetInstructions)
	}
}

// The second row of countmin.o, from the instruction after the first
// atomic add through the second, translates to the 108 NFP instructions
// that target/nfp's TestCountMinRow derives from jit.c, plus the raw
// lookup's 9.
func TestCountMinRowObject(t *testing.T) {
	g, tg := nfpGraph(t, "countmin")
	p := g.Prog
	x := newNFPTranslator(g, tg)
	var adds []int
	for i, ins := range p.Insns {
		if ins.OpCode.Mode() == asm.AtomicMode {
			adds = append(adds, i)
		}
	}
	if len(adds) != 5 {
		t.Fatalf("%d atomic adds, want one per row (5)", len(adds))
	}
	n := 0
	for i := adds[0] + 1; i <= adds[1]; i++ {
		n += x.Insn(i).Insns
	}
	if n != 108+9 {
		t.Errorf("row 1: %d NFP instructions, want 117", n)
	}
}
