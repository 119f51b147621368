package symex

import (
	"context"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/dpperf/dpperf/bpfprog"
	"github.com/dpperf/dpperf/smt"
)

// TestStoredPacketByteFolds: a byte the path stored at a constant packet
// offset is read back as the stored term, not through the chain of stores,
// so the branch that contradicts it folds without the solver.
func TestStoredPacketByteFolds(t *testing.T) {
	p, err := bpfprog.New("t", ebpf.XDP, asm.Instructions{
		asm.LoadMem(asm.R2, asm.R1, 0, asm.Word), // data
		asm.LoadMem(asm.R3, asm.R1, 4, asm.Word), // data_end
		asm.Mov.Reg(asm.R4, asm.R2),
		asm.Add.Imm(asm.R4, 100),
		{OpCode: asm.JGT.Op(asm.RegSource), Dst: asm.R4, Src: asm.R3, Offset: 7},
		asm.LoadMem(asm.R7, asm.R2, 21, asm.Byte), // a byte before any store
		asm.Mov.Imm(asm.R5, 0x42),
		asm.StoreMem(asm.R2, 20, asm.R5, asm.Byte),
		asm.StoreMem(asm.R2, 22, asm.R7, asm.Byte),
		asm.LoadMem(asm.R6, asm.R2, 20, asm.Byte),
		{OpCode: asm.JEq.Op(asm.ImmSource), Dst: asm.R6, Constant: 0x42, Offset: 2},
		asm.Mov.Imm(asm.R0, 1),
		asm.Return(),
		asm.Mov.Imm(asm.R0, 2),
		asm.Return(),
	}, nil)
	g := graphFrom(t, p, err)
	c, err := NewChecker(g, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	refuted := 0
	for _, path := range allPaths(t, g, 10) {
		out, err := c.Check(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		if out.Result == smt.Unsat {
			refuted++
		}
	}
	if refuted != 1 || c.Folded != 1 {
		t.Errorf("%d paths refuted, %d folded: want the path where the stored 0x42 differs from 0x42, folded", refuted, c.Folded)
	}
}
