package nfp

import (
	"testing"

	"github.com/cilium/ebpf/asm"
)

// copyProg copies 8*n bytes of a map value (R0) to the packet (R1) in
// eight-byte pairs, with a jump from before the copy landing on pair
// split (none when split < 0).
func copyProg(t *testing.T, n, split int) *Prog {
	insns := asm.Instructions{{OpCode: asm.JEq.Op(asm.ImmSource), Dst: asm.R5, Constant: 0}}
	regions := []Region{0}
	for k := 0; k < n; k++ {
		insns = append(insns,
			asm.LoadMem(asm.R3, asm.R0, int16(8*k), asm.DWord),
			asm.StoreMem(asm.R1, int16(40+8*k), asm.R3, asm.DWord))
		regions = append(regions, MapValue, Packet)
	}
	if split >= 0 {
		insns[0].Offset = int16(2 * split)
	}
	insns = append(insns, asm.Mov.Imm(asm.R0, 2), asm.Return())
	return Analyze(prog(t, insns, nil), regions, nil)
}

// Six pairs of a 48-byte copy become one nfp_cpp_memcpy: the read (length
// override above 32 bytes, the command, 12 transfer moves, the reload of
// R3), priced on the DRAM engine as the six 8-byte reads it replaces, and
// the write (immed of the length and an indirect
// write32); the other ten instructions are carried by them.
func TestCopyMerged(t *testing.T) {
	a := copyProg(t, 6, -1)
	rd, wr := a.Insn(1), a.Insn(2)
	if rd.Insns != 1+1+12+2 || rd.DRAMReads != 6 || rd.Latency != LatencyDRAM || rd.From != "nfp_cpp_memcpy" {
		t.Errorf("read: %+v", rd)
	}
	if wr.Insns != 2 || wr.DRAMReads != 0 || wr.Latency != LatencySRAM {
		t.Errorf("write: %+v", wr)
	}
	for i := 3; i <= 12; i++ {
		if s := a.Insn(i); s.Insns != 0 || s.DRAMReads != 0 || s.Command {
			t.Errorf("instruction %d: %+v, want carried by the run", i, s)
		}
	}
}

// A jump landing on the fourth pair ends the run there: two runs of 24
// bytes, two read commands of three engine reads each.
func TestCopySplitByJump(t *testing.T) {
	a := copyProg(t, 6, 3)
	reads := 0
	for i := range a.p.Insns {
		reads += a.Insn(i).DRAMReads
	}
	if reads != 6 || a.copies[1] == nil || a.copies[7] == nil || a.copies[1].n != 24 {
		t.Errorf("%d DRAM reads, runs %v", reads, a.copies)
	}
}

// A single pair is not a run: an ordinary map value load and packet store.
func TestCopySinglePair(t *testing.T) {
	a := copyProg(t, 1, -1)
	if s := a.Insn(1); s.From != "mem_ldx_emem" || s.DRAMReads != 1 {
		t.Errorf("load: %+v", s)
	}
	if s := a.Insn(2); s.From != "mem_stx_data" {
		t.Errorf("store: %+v", s)
	}
}
