package symex

import (
	"context"
	"fmt"
	"math/rand"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/dpperf/dpperf/bpfprog"
	"github.com/dpperf/dpperf/cfg"
	"github.com/dpperf/dpperf/interp"
	"github.com/dpperf/dpperf/interp/interptest"
	"github.com/dpperf/dpperf/smt"
)

// FuzzInterpAgreesWithSymex compares the two semantics of BPF
// instructions: on generated programs (interptest.GenProgram: ALU32/64
// operations, byte swaps, conditional forward jumps, bounds-checked packet
// loads and stores, stack and context accesses) the interpreter runs a
// packet, and the symbolic executor, on the graph path that run took, must
// find the path satisfiable with that packet's bytes and length (and its
// ifindex and queue), and then force the interpreter's return value and
// output packet: no other value is possible.
func FuzzInterpAgreesWithSymex(f *testing.F) {
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 8; i++ {
		f.Add(randomBytes(r, 40+8*i), randomBytes(r, 14+9*i), uint8(i))
	}
	f.Fuzz(func(t *testing.T, prog, pkt []byte, rxq uint8) {
		if len(pkt) < interp.MinPacket || len(pkt) > 512 {
			return
		}
		checkAgreement(t, prog, pkt, rxq)
	})
}

// TestInterpAgreesWithSymex runs a fixed number of pseudo-random
// programs and packets through the comparison of
// FuzzInterpAgreesWithSymex.
func TestInterpAgreesWithSymex(t *testing.T) {
	n := 300
	if testing.Short() {
		n = 50
	}
	r := rand.New(rand.NewSource(42))
	for i := 0; i < n; i++ {
		prog, pkt := randomBytes(r, 20+r.Intn(200)), randomBytes(r, interp.MinPacket+r.Intn(120))
		checkAgreement(t, prog, pkt, uint8(r.Intn(4)))
		if t.Failed() {
			t.Fatalf("input %d of %d", i, n)
		}
	}
}

func randomBytes(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	r.Read(b)
	return b
}

// diffChecker is one Checker that the comparisons of a test process take
// turns with: starting a solver per input costs more than checking it.
var diffChecker struct {
	sync.Mutex
	c *Checker
}

// checkerFor returns the shared Checker set to g, with nothing loaded.
// The programs use no maps, so the solver's declarations stay valid.
func checkerFor(t *testing.T, g *cfg.Graph) *Checker {
	c := diffChecker.c
	if c != nil {
		if err := c.solverAt(0); err == nil && c.s.Depth() == 0 {
			c.g, c.path, c.levels, c.knownSat, c.model = g, nil, nil, 0, -1
			c.notes = map[string]bool{}
			return c
		}
		c.Close()
	}
	c, err := NewChecker(g, Options{MinPacket: interp.MinPacket, MaxPacket: interp.MaxPacket, Abstract: -1,
		Solver: smt.Config{Timeout: 20 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	diffChecker.c = c
	return c
}

// TestMov32OverPointer: a 32-bit move of a number into a register that
// holds a pointer (the compiler reuses registers so) makes it a number;
// symbolic execution took it for 32-bit pointer arithmetic.
func TestMov32OverPointer(t *testing.T) {
	for _, ins := range []asm.Instruction{asm.Mov.Imm32(asm.R3, 7), asm.Mov.Reg32(asm.R3, asm.R4)} {
		p, err := bpfprog.New("mov32", ebpf.XDP, asm.Instructions{
			asm.LoadMem(asm.R3, asm.R1, 4, asm.Word),
			asm.LoadMem(asm.R4, asm.R1, 16, asm.Word),
			ins,
			asm.Mov.Reg(asm.R0, asm.R3),
			asm.Return(),
		}, nil)
		if err != nil {
			t.Fatal(err)
		}
		agree(t, p, make([]byte, 20), 5)
	}
}

// checkAgreement runs the generated program of prog on pkt in both
// engines (see agree).
func checkAgreement(t *testing.T, prog, pkt []byte, rxq uint8) {
	t.Helper()
	p, err := interptest.GenProgram(prog)
	if err != nil {
		t.Fatalf("generated program: %v\n%v", err, interptest.GenInsns(prog))
	}
	agree(t, p, pkt, rxq)
}

// agree runs p on pkt in both engines and fails the test on any
// disagreement, printing the program, the packet and both answers.
func agree(t *testing.T, p *bpfprog.Program, pkt []byte, rxq uint8) {
	t.Helper()
	report := func(format string, args ...any) {
		t.Helper()
		t.Errorf("%s\nprogram:\n%vpacket (%d bytes): %x, rx queue %d", fmt.Sprintf(format, args...), p.Insns, len(pkt), pkt, rxq)
	}
	g, err := cfg.Build(p, cfg.Options{})
	if err != nil {
		report("graph: %v", err)
		return
	}
	vm, err := interp.New(p, interp.Options{})
	if err != nil {
		report("interpreter: %v", err)
		return
	}
	maps, err := interp.NewMaps(p, nil, interp.MapOptions{})
	if err != nil {
		t.Fatal(err)
	}
	in := interp.Input{Packet: pkt, Ifindex: 1, RxQueue: uint32(rxq)}
	res, err := vm.Run(in, maps)
	if err != nil {
		report("interpreter run: %v", err)
		return
	}
	edges, err := cfg.PathOf(g, res.Path)
	if err != nil {
		report("interpreter's path %v: %v", res.Path, err)
		return
	}
	diffChecker.Lock()
	defer diffChecker.Unlock()
	c := checkerFor(t, g)
	if err := c.load(context.Background(), edges); err != nil {
		report("symbolic execution of the interpreter's path %v: %v", res.Path, err)
		return
	}
	if n := c.Notes(); len(n) > 0 {
		report("symbolic execution over-approximates: %v", n)
		return
	}
	msg, err := pinnedAgreement(c, in, res)
	if err != nil {
		t.Fatal(err)
	}
	if msg != "" {
		report("interpreter: verdict %#x, packet %x; symbolic execution: %s (path %v)", res.Verdict, res.Packet, msg, res.Path)
	}
}

// pinnedAgreement checks the loaded path with the input pinned: it must
// be satisfiable, its verdict (R0's low 32 bits, as the kernel returns it)
// and output packet must be the interpreter's in the model, and no model
// may give others. It returns what differs, or "".
func pinnedAgreement(c *Checker, in interp.Input, res *interp.Result) (string, error) {
	ctx := context.Background()
	n := len(c.levels)
	st := c.levels[n-1].st
	if !st.exited {
		return "the path does not exit", nil
	}
	if err := c.solverAt(n); err != nil {
		return "", err
	}
	pin := []string{lenIs(uint64(len(in.Packet))),
		"(= ifindex " + konst(32, uint64(in.Ifindex)).s + ")",
		"(= rxq " + konst(32, uint64(in.RxQueue)).s + ")"}
	for i, b := range in.Packet {
		pin = append(pin, fmt.Sprintf("(= (select pkt0 %s) %s)", konst(32, uint64(i)).s, konst(8, uint64(b)).s))
	}
	scopes := 0
	defer c.popScopes(c.s, &scopes)
	if err := c.assume("(and "+strings.Join(pin, " ")+")", &scopes); err != nil {
		return "", err
	}
	if r, err := c.s.Check(ctx); err != nil || r != smt.Sat {
		return "the path with the packet is " + r.String(), err
	}
	terms := []string{"((_ extract 31 0) " + st.verdict.s + ")"}
	want := []uint64{uint64(res.Verdict)}
	for i, b := range res.Packet {
		terms = append(terms, fmt.Sprintf("(select %s %s)", st.pkt.arr, konst(32, uint64(i)).s))
		want = append(want, uint64(b))
	}
	vals, err := c.s.Values(terms)
	if err != nil {
		return "", err
	}
	var eqs, diffs []string
	for i, v := range vals {
		got, err := strconv.ParseUint(strings.TrimPrefix(v, "#x"), 16, 64)
		if err != nil {
			return "", fmt.Errorf("value %q of %s: %v", v, terms[i], err)
		}
		if got != want[i] {
			diffs = append(diffs, fmt.Sprintf("%s = %#x, not %#x", terms[i], got, want[i]))
		}
		w := uint16(8)
		if i == 0 {
			w = 32
		}
		eqs = append(eqs, "(= "+terms[i]+" "+konst(w, want[i]).s+")")
	}
	if len(diffs) > 0 {
		return strings.Join(diffs, "; "), nil
	}
	if err := c.assume("(not (and "+strings.Join(eqs, " ")+"))", &scopes); err != nil {
		return "", err
	}
	if r, err := c.s.Check(ctx); err != nil || r != smt.Unsat {
		return "another verdict or packet is " + r.String(), err
	}
	return "", nil
}
