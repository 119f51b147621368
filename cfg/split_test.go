package cfg

import (
	"math/big"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cilium/ebpf/asm"

	"github.com/dpperf/dpperf/bpfprog"
	"github.com/dpperf/dpperf/internal/testobj"
)

// optionalHeader skips an 8-byte header when the first packet byte is
// non-zero, then checks that 4 bytes follow: 14+4 bytes without the
// header, 14+8+4 with it.
func optionalHeader() asm.Instructions {
	insns := asm.Instructions{
		asm.LoadMem(asm.R2, asm.R1, 4, asm.Word), // data_end
		asm.LoadMem(asm.R6, asm.R1, 0, asm.Word), // data
		asm.Mov.Reg(asm.R3, asm.R6),
		asm.Add.Imm(asm.R3, 14),
		asm.Mov.Imm(asm.R0, 2),
		asm.Mov.Reg(asm.R5, asm.R6),
		asm.Add.Imm(asm.R5, 1),
		asm.JGT.Reg(asm.R5, asm.R2, ""),          // → exit
		asm.LoadMem(asm.R4, asm.R6, 0, asm.Byte), // the choice
		asm.JEq.Imm(asm.R4, 0, ""),               // → check
		asm.Add.Imm(asm.R3, 8),                   // the header
		asm.Mov.Reg(asm.R5, asm.R3),              // check:
		asm.Add.Imm(asm.R5, 4),
		asm.JGT.Reg(asm.R5, asm.R2, ""), // → exit; not taken: the length
		asm.Mov.Imm(asm.R0, 1),
		asm.Return(),
	}
	insns[7].Offset = 7
	insns[9].Offset = 1
	insns[13].Offset = 1
	return insns
}

// TestSplitKeepsOffsets: the two ways into the check keep their own
// packet offsets, so the check proves 18 bytes on one and 26 on the other;
// joined, both would prove 18.
func TestSplitKeepsOffsets(t *testing.T) {
	splitAndJoined(t, optionalHeader(), []int32{18, 26}, []int32{18})
}

// splitAndJoined checks the packet lengths that the bounds checks of insns
// prove on their not-taken edges, with splitting and without.
func splitAndJoined(t *testing.T, insns asm.Instructions, split, joined []int32) {
	t.Helper()
	lens := func() []int32 {
		g, err := build(t, insns, Options{})
		if err != nil {
			t.Fatal(err)
		}
		var l []int32
		for _, e := range g.Edges {
			if e.Kind == EdgeNotTaken && e.MinLen > 1 {
				l = append(l, e.MinLen)
			}
		}
		slices.Sort(l)
		return l
	}
	if got := lens(); !slices.Equal(got, split) {
		t.Errorf("split: the checks prove %v bytes, want %v", got, split)
	}
	defer func(n int) { splitNodes = n }(splitNodes)
	splitNodes = 0
	if got := lens(); !slices.Equal(got, joined) {
		t.Errorf("joined: the checks prove %v bytes, want %v", got, joined)
	}
}

// indexedCheck reads one byte past a 15-byte header and keeps an index
// of 1 or 3 in R7 by it; the check after the join adds the index to the
// packet pointer and needs 16 more bytes: 17 on one way, 19 on the other.
func indexedCheck() asm.Instructions {
	insns := asm.Instructions{
		asm.LoadMem(asm.R2, asm.R1, 4, asm.Word), // data_end
		asm.LoadMem(asm.R6, asm.R1, 0, asm.Word), // data
		asm.Mov.Imm(asm.R0, 2),
		asm.Mov.Reg(asm.R5, asm.R6),
		asm.Add.Imm(asm.R5, 15),
		asm.JGT.Reg(asm.R5, asm.R2, ""),           // → exit
		asm.LoadMem(asm.R4, asm.R6, 14, asm.Byte), // the choice
		asm.Mov.Imm(asm.R7, 1),
		asm.JEq.Imm(asm.R4, 0, ""), // → check
		asm.Mov.Imm(asm.R7, 3),
		asm.Mov.Reg(asm.R3, asm.R6), // check:
		asm.Add.Reg(asm.R3, asm.R7),
		asm.Add.Imm(asm.R3, 16),
		asm.JGT.Reg(asm.R3, asm.R2, ""), // → exit; not taken: the length
		asm.Mov.Imm(asm.R0, 1),
		asm.Return(),
	}
	insns[5].Offset = 9
	insns[8].Offset = 1
	insns[13].Offset = 1
	return insns
}

// TestSplitByIndex: the ways into a check that adds a register to a
// packet pointer, holding different constants, keep their own nodes, so
// the check proves 17 bytes on one and 19 on the other; joined, both
// would prove 17.
func TestSplitByIndex(t *testing.T) {
	splitAndJoined(t, indexedCheck(), []int32{15, 17, 19}, []int32{15, 17})
}

// TestShiftByJoinedAmount: clang merges header kinds whose length rules
// differ in a shift ((len+1)*8 and (len+2)*4) into a shift by a register
// holding 2 or 3; the range of the product still gives the pointer a
// least offset.
func TestShiftByJoinedAmount(t *testing.T) {
	v := rangeALU(asm.LSh, value{kind: between, off: 0, hi: 255}, value{kind: between, off: 2, hi: 3})
	if v.kind != between || v.off != 0 || v.hi != 255<<3 {
		t.Errorf("[0,255] << [2,3] = %+v, want [0, 2040]", v)
	}
	p := alu(asm.Add, false, ptr(RegionPacket, 0, 54), v)
	p = alu(asm.Add, false, p, constant(8))
	if !p.hasMin || p.off != 62 {
		t.Errorf("data+54 + [0,2040] + 8 = %+v, want at least data+62", p)
	}
	if v := rangeALU(asm.LSh, value{kind: between, off: 1, hi: 2}, value{kind: between, off: 0, hi: 30}); v != top {
		t.Errorf("a shift by up to 30 gives %+v, want top", v)
	}
}

// TestSplitKeepsPaths: splitting gives a node to groups of edges, never a
// path more: every bundled object has at most as many source-to-sink paths
// split as joined, and no sequence of blocks the joined graph lacks. A
// copy's sharper state may prove a branch side impossible that the joined
// node kept (ipv6ext_quic: on every way into one copy of the test of the
// routing-header count no header was read, so the count is 0).
func TestSplitKeepsPaths(t *testing.T) {
	dir := filepath.Join(testobj.Root(), "build", "bpf")
	objs, _ := filepath.Glob(filepath.Join(dir, "*.o"))
	if len(objs) == 0 {
		t.Fatalf("no objects in %s (make bpf builds them)", dir)
	}
	splitSome := 0
	for _, obj := range objs {
		name := strings.TrimSuffix(filepath.Base(obj), ".o")
		progs, err := bpfprog.XDPPrograms(obj)
		if err != nil || len(progs) == 0 {
			continue
		}
		p := progs[0]
		split, err := Build(p, Options{Unroll: 8})
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		n := splitNodes
		splitNodes = 0
		joined, err := Build(p, Options{Unroll: 8})
		splitNodes = n
		if err != nil {
			t.Fatal(err)
		}
		if len(split.Nodes) != len(joined.Nodes) {
			splitSome++
		}
		if a, b := countPaths(split), countPaths(joined); a.Cmp(b) > 0 {
			t.Errorf("%s: %v paths split, %v joined", name, a, b)
		}
		if countPaths(joined).Cmp(big.NewInt(5000)) <= 0 {
			have := map[string]bool{}
			for _, p := range blockPaths(joined) {
				have[p] = true
			}
			for _, p := range blockPaths(split) {
				if !have[p] {
					t.Errorf("%s: the split graph has a path the joined one lacks: %s", name, p)
					break
				}
			}
		}
	}
	if splitSome == 0 {
		t.Error("no object had a block split: the test checks nothing")
	}
	t.Logf("%d of %d objects have split blocks", splitSome, len(objs))
}

// countPaths counts the source-to-sink paths of g, whose edges are in
// topological order.
func countPaths(g *Graph) *big.Int {
	n := make([]big.Int, len(g.Nodes))
	n[g.Source].SetInt64(1)
	for _, e := range g.Edges {
		n[e.To].Add(&n[e.To], &n[e.From])
	}
	return &n[g.Sink]
}

// blockPaths lists every path as its sequence of (function, block, edge
// kind), sorted.
func blockPaths(g *Graph) []string {
	out := g.OutEdges()
	var paths []string
	var walk func(v NodeID, prefix string)
	walk = func(v NodeID, prefix string) {
		if v == g.Sink {
			paths = append(paths, prefix)
			return
		}
		for _, e := range out[v] {
			ed := g.Edges[e]
			nd := g.Nodes[ed.To]
			walk(ed.To, prefix+" "+strings.Join([]string{itoa(int(nd.Func)), itoa(int(nd.Block)), itoa(int(ed.Kind))}, "/"))
		}
	}
	walk(g.Source, "")
	slices.Sort(paths)
	return paths
}

func itoa(i int) string { return strconv.Itoa(i) }
