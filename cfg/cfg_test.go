package cfg

import (
	"strings"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/dpperf/dpperf/bpfprog"
	"github.com/dpperf/dpperf/internal/testobj"
)

func build(t *testing.T, insns asm.Instructions, opts Options) (*Graph, error) {
	t.Helper()
	return buildWithMaps(t, insns, nil, opts)
}

// buildWithMaps is build for a program that uses maps.
func buildWithMaps(t *testing.T, insns asm.Instructions, maps map[string]*bpfprog.Map, opts Options) (*Graph, error) {
	t.Helper()
	p, err := bpfprog.New("t", ebpf.XDP, insns, maps)
	if err != nil {
		t.Fatal(err)
	}
	return Build(p, opts)
}

// unknownLoop counts down from a packet byte: its trip count depends on the
// packet, so no proof exists.
func unknownLoop() asm.Instructions {
	insns := asm.Instructions{
		asm.LoadMem(asm.R2, asm.R1, 4, asm.Word),
		asm.LoadMem(asm.R1, asm.R1, 0, asm.Word),
		asm.Mov.Reg(asm.R3, asm.R1),
		asm.Add.Imm(asm.R3, 1),
		asm.Mov.Imm(asm.R0, 2),
		asm.JGT.Reg(asm.R3, asm.R2, ""), // → exit
		asm.LoadMem(asm.R4, asm.R1, 0, asm.Byte),
		asm.Add.Imm(asm.R4, -1), // loop header
		asm.JNE.Imm(asm.R4, 0, ""),
		asm.Return(),
	}
	insns[5].Offset = 3  // to the exit
	insns[8].Offset = -2 // back to the header
	return insns
}

func TestUnknownLoopBoundIsAnError(t *testing.T) {
	_, err := build(t, unknownLoop(), Options{MaxTrips: 64})
	if err == nil || !strings.Contains(err.Error(), "--unroll") || !strings.Contains(err.Error(), "instruction 7") {
		t.Fatalf("error %v, want one naming the loop and --unroll", err)
	}
}

func TestUnrollOption(t *testing.T) {
	for _, n := range []int{1, 5, 32} {
		g, err := build(t, unknownLoop(), Options{Unroll: n, MaxTrips: 64})
		if err != nil {
			t.Fatal(err)
		}
		if len(g.Loops) != 1 || g.Loops[0].Trips != n || g.Loops[0].How != "unroll" {
			t.Fatalf("--unroll %d: loops %+v", n, g.Loops)
		}
		// Source, 2 blocks before the loop, n header copies, exit, sink.
		if want := 2 + 2 + n + 1; len(g.Nodes) != want {
			t.Errorf("--unroll %d: %d nodes, want %d", n, len(g.Nodes), want)
		}
	}
	g, err := build(t, unknownLoop(), Options{LoopBounds: map[string]int{"insn:7": 3}})
	if err != nil || g.Loops[0].Trips != 3 || g.Loops[0].How != "bound" {
		t.Fatalf("--loop-bound insn:7=3: %v %+v", err, g)
	}
}

// TestProvenTripCount: the checksum loop of examples/xdp/loop.c runs ten
// times; the analysis proves it from the induction variable.
func TestProvenTripCount(t *testing.T) {
	p, err := bpfprog.LoadFile(testobj.Built(t, "loop"), "")
	if err != nil {
		t.Fatal(err)
	}
	g, err := Build(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Loops) != 1 || g.Loops[0].Trips != 10 || g.Loops[0].How != "proven" || !strings.HasPrefix(g.Loops[0].Line, "loop.c:") {
		t.Fatalf("loops %+v, want one proven 10-trip loop in loop.c", g.Loops)
	}
}

// TestCallsInlinedPerSite: call.c calls port_denied from several sites; each
// gets its own copy of the callee's blocks.
func TestCallsInlinedPerSite(t *testing.T) {
	p, err := bpfprog.LoadFile(testobj.Built(t, "call"), "")
	if err != nil {
		t.Fatal(err)
	}
	g, err := Build(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	frames := map[int32]bool{}
	calls, returns := 0, 0
	for _, n := range g.Nodes {
		if n.Func == 1 {
			frames[n.Frame] = true
		}
	}
	for _, e := range g.Edges {
		switch e.Kind {
		case EdgeCall:
			calls++
		case EdgeReturn:
			returns++
		}
	}
	if len(frames) < 2 || calls != len(frames) || returns < calls {
		t.Fatalf("callee copies %d, call edges %d, return edges %d; want one copy per call site (at least 2)", len(frames), calls, returns)
	}
	for i, e := range g.Edges {
		if e.From >= e.To {
			t.Fatalf("edge %d goes from %d to %d: not topological", i, e.From, e.To)
		}
	}
}

func TestUnsupportedInstruction(t *testing.T) {
	insns := asm.Instructions{
		asm.Mov.Imm(asm.R0, 2),
		{OpCode: asm.OpCode(asm.JumpClass).SetJumpOp(asm.JCOND)}, // may_goto: valid, not modelled
		asm.Return(),
	}
	_, err := build(t, insns, Options{})
	if err == nil || !strings.Contains(err.Error(), "unsupported instruction") {
		t.Fatalf("error %v", err)
	}
}
