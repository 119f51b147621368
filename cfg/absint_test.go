package cfg

import (
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/dpperf/dpperf/bpfprog"
)

// keyedLookup looks up key 1 or key 3 (chosen by a packet byte) in the
// array "arr" and returns 2 when an element is found, 1 when not.
func keyedLookup() asm.Instructions {
	insns := asm.Instructions{
		asm.LoadMem(asm.R2, asm.R1, 0, asm.Word), // data
		asm.LoadMem(asm.R4, asm.R2, 0, asm.Byte), // a packet byte: unknown
		asm.Mov.Imm(asm.R5, 1),
		asm.JEq.Imm(asm.R4, 7, ""), // → store
		asm.Mov.Imm(asm.R5, 3),
		asm.StoreMem(asm.R10, -4, asm.R5, asm.Word), // store: the key
		asm.LoadMapPtr(asm.R1, 0).WithReference("arr"),
		asm.Mov.Reg(asm.R2, asm.R10),
		asm.Add.Imm(asm.R2, -4),
		asm.FnMapLookupElem.Call(),
		asm.JEq.Imm(asm.R0, 0, ""), // → not found
		asm.Mov.Imm(asm.R0, 2),
		asm.Return(),
		asm.Mov.Imm(asm.R0, 1), // not found
		asm.Return(),
	}
	insns[3].Offset = 1
	insns[10].Offset = 2
	return insns
}

func exits(t *testing.T, insns asm.Instructions, maps map[string]*bpfprog.Map) int {
	t.Helper()
	g, err := buildWithMaps(t, insns, maps, Options{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range g.Edges {
		if e.Kind == EdgeExit {
			n++
		}
	}
	return n
}

// TestArrayLookupNotNull: an array lookup whose key is below the array's
// size on every path finds an element, so its NULL check has one side;
// a key that may reach the size keeps both, and so does a hash map.
func TestArrayLookupNotNull(t *testing.T) {
	for _, tc := range []struct {
		typ     ebpf.MapType
		entries uint32
		exits   int
	}{
		{ebpf.Array, 4, 1},
		{ebpf.PerCPUArray, 4, 1},
		{ebpf.Array, 3, 2}, // key 3 is out of range: NULL
		{ebpf.Hash, 4, 2},
	} {
		maps := map[string]*bpfprog.Map{"arr": {Name: "arr", Type: tc.typ, KeySize: 4, ValueSize: 8, MaxEntries: tc.entries}}
		if got := exits(t, keyedLookup(), maps); got != tc.exits {
			t.Errorf("%v of %d entries: %d exits, want %d", tc.typ, tc.entries, got, tc.exits)
		}
	}
}

// TestNarrowLoadTruncates: a 32-bit store of a 64-bit constant keeps its
// low half, which a 32-bit load reads back zero-extended.
func TestNarrowLoadTruncates(t *testing.T) {
	insns := asm.Instructions{
		asm.LoadImm(asm.R1, 0x1_0000_0002, asm.DWord),
		asm.StoreMem(asm.R10, -4, asm.R1, asm.Word),
		asm.LoadMem(asm.R2, asm.R10, -4, asm.Word),
		asm.Mov.Imm(asm.R0, 1),
		asm.JEq.Imm(asm.R2, 2, ""), // always taken
		asm.Mov.Imm(asm.R0, 2),
		asm.Return(),
	}
	insns[4].Offset = 1
	g, err := build(t, insns, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range g.Edges {
		if e.Kind == EdgeNotTaken {
			t.Fatalf("the comparison of the loaded low half with 2 kept its not-taken side")
		}
	}
}

// TestVariableOffsetKeepsPacketRegion: a packet pointer plus an offset
// read from the packet (as after a variable-length header, scaled by 8) is
// still a packet pointer, whichever operand the addition's destination
// holds, so loads through it are packet loads, not loads of unknown memory.
func TestVariableOffsetKeepsPacketRegion(t *testing.T) {
	insns := asm.Instructions{
		asm.LoadMem(asm.R2, asm.R1, 4, asm.Word), // data_end
		asm.LoadMem(asm.R6, asm.R1, 0, asm.Word), // data
		asm.Mov.Reg(asm.R3, asm.R6),
		asm.Add.Imm(asm.R3, 64),
		asm.Mov.Imm(asm.R0, 2),
		asm.JGT.Reg(asm.R3, asm.R2, ""),          // → exit
		asm.LoadMem(asm.R4, asm.R6, 1, asm.Byte), // a header length: unknown
		asm.LSh.Imm(asm.R4, 3),
		asm.Add.Reg(asm.R4, asm.R6), // scalar += packet pointer
		asm.Mov.Reg(asm.R5, asm.R4),
		asm.Add.Imm(asm.R5, 2),
		asm.JGT.Reg(asm.R5, asm.R2, ""),          // → exit
		asm.LoadMem(asm.R0, asm.R4, 0, asm.Byte), // insn 12
		asm.LoadMem(asm.R7, asm.R6, 2, asm.Byte),
		asm.Mov.Reg(asm.R8, asm.R6),
		asm.Add.Reg(asm.R8, asm.R7),              // packet pointer += scalar
		asm.LoadMem(asm.R0, asm.R8, 0, asm.Byte), // insn 16
		asm.Return(),
	}
	insns[5].Offset = 11
	insns[11].Offset = 5
	g, err := build(t, insns, Options{})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int32]Region{}
	for _, n := range g.Nodes {
		for _, op := range n.Ops {
			if op.Kind == OpLoad {
				seen[op.Insn] = op.Region
			}
		}
	}
	for _, i := range []int32{12, 16} {
		if r, ok := seen[i]; !ok || r != RegionPacket {
			t.Errorf("load at instruction %d: region %v (seen %v), want packet", i, r, ok)
		}
	}
}

// TestVariableOffsetMinLen: a bounds check through a packet pointer moved
// by (byte + 1) * 8 proves the packet at least as long as with a zero
// byte: 64 + 8 + 2 bytes on the side that goes on.
func TestVariableOffsetMinLen(t *testing.T) {
	insns := asm.Instructions{
		asm.LoadMem(asm.R2, asm.R1, 4, asm.Word), // data_end
		asm.LoadMem(asm.R6, asm.R1, 0, asm.Word), // data
		asm.Mov.Reg(asm.R3, asm.R6),
		asm.Add.Imm(asm.R3, 64),
		asm.Mov.Imm(asm.R0, 2),
		asm.JGT.Reg(asm.R3, asm.R2, ""),          // → exit
		asm.LoadMem(asm.R4, asm.R6, 1, asm.Byte), // a header length in [0, 255]
		asm.Add.Imm(asm.R4, 1),
		asm.LSh.Imm(asm.R4, 3),
		asm.Add.Reg(asm.R4, asm.R3), // at least data + 72
		asm.Mov.Reg(asm.R5, asm.R4),
		asm.Add.Imm(asm.R5, 2),
		asm.JGT.Reg(asm.R5, asm.R2, ""), // → exit; not taken: len >= 74
		asm.LoadMem(asm.R0, asm.R4, 0, asm.Byte),
		asm.Return(),
	}
	insns[5].Offset = 8
	insns[12].Offset = 1
	g, err := build(t, insns, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var lens []int32
	for _, e := range g.Edges {
		if e.Kind == EdgeNotTaken {
			lens = append(lens, e.MinLen)
		}
	}
	if len(lens) != 2 || max(lens[0], lens[1]) != 74 || min(lens[0], lens[1]) != 64 {
		t.Fatalf("not-taken edges prove %v bytes, want 64 and 74", lens)
	}
}
