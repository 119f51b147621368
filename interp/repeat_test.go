package interp

import (
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/dpperf/dpperf/bpfprog"
)

// markOnce returns XDP_TX and sets packet byte 14 when it is zero, and
// XDP_PASS otherwise (or when mark is false, it only reads the byte).
func markOnce(mark bool) asm.Instructions {
	insns := asm.Instructions{
		asm.LoadMem(asm.R2, asm.R1, 0, asm.Word), // data
		asm.LoadMem(asm.R3, asm.R1, 4, asm.Word), // data_end
		asm.Mov.Reg(asm.R4, asm.R2),
		asm.Add.Imm(asm.R4, 15),
		asm.JGT.Reg(asm.R4, asm.R3, ""), // → pass
		asm.LoadMem(asm.R5, asm.R2, 14, asm.Byte),
		asm.JNE.Imm(asm.R5, 0, ""), // → pass
	}
	if mark {
		insns = append(insns, asm.StoreImm(asm.R2, 14, 1, asm.Byte))
	}
	insns = append(insns,
		asm.Mov.Imm(asm.R0, 3),
		asm.Return(),
		asm.Mov.Imm(asm.R0, 2),
		asm.Return(),
	)
	pass := len(insns) - 2
	insns[4].Offset = int16(pass - 5)
	insns[6].Offset = int16(pass - 7)
	return insns
}

// TestRepeatCarriesThePacket: the repeats of one BPF_PROG_TEST_RUN run on
// the buffer the run before left, so a program that marks the packet takes
// another path from its second run on; one that only reads it stays.
func TestRepeatCarriesThePacket(t *testing.T) {
	for _, tc := range []struct {
		mark bool
		n    int
		want bool
	}{{true, 2, false}, {true, 1, true}, {false, 16, true}} {
		p, err := bpfprog.New("t", ebpf.XDP, markOnce(tc.mark), nil)
		if err != nil {
			t.Fatal(err)
		}
		ms, err := NewMaps(p, nil, MapOptions{})
		if err != nil {
			t.Fatal(err)
		}
		it, err := New(p, Options{})
		if err != nil {
			t.Fatal(err)
		}
		first, same, err := it.Repeat(Input{Packet: make([]byte, 64)}, ms, tc.n)
		if err != nil {
			t.Fatal(err)
		}
		if first.Verdict != 3 || same != tc.want {
			t.Errorf("mark %v, %d runs: first verdict %d, same path %v; want 3, %v", tc.mark, tc.n, first.Verdict, same, tc.want)
		}
	}
}
