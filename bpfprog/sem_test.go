package bpfprog

import (
	"testing"

	"github.com/cilium/ebpf/asm"
)

// TestALU holds the kernel's answers for the edge cases of BPF arithmetic.
func TestALU(t *testing.T) {
	const min64 = uint64(1) << 63
	for _, c := range []struct {
		op   asm.ALUOp
		w    int
		a, b uint64
		want uint64
	}{
		{asm.Div, 64, 7, 0, 0},
		{asm.Mod, 64, 7, 0, 7},
		{asm.SDiv, 64, min64, ^uint64(0), min64},
		{asm.SMod, 64, min64, ^uint64(0), 0},
		{asm.SDiv, 64, ^uint64(6), 2, ^uint64(2)}, // -7 / 2 = -3
		{asm.SDiv, 32, 0xfffffff8, 2, 0xfffffffc}, // -8 / 2 = -4 in 32 bits
		{asm.SMod, 32, 7, 0, 7},
		{asm.LSh, 64, 1, 65, 2},         // count modulo 64
		{asm.LSh, 32, 1, 33, 2},         // count modulo 32
		{asm.Add, 32, 0xffffffff, 1, 0}, // 32-bit wraps
		{asm.ArSh, 32, 0x80000000, 4, 0xf8000000},
		{asm.ArSh, 64, min64, 63, ^uint64(0)},
		{asm.Neg, 32, 1, 0, 0xffffffff},
		{asm.Mov, 32, 5, 0x100000003, 3},
	} {
		got, ok := ALU(c.op, c.w, c.a, c.b)
		if !ok || got != c.want {
			t.Errorf("%v/%d %#x, %#x = %#x (%v), want %#x", c.op, c.w, c.a, c.b, got, ok, c.want)
		}
	}
	if _, ok := ALU(asm.Swap, 64, 1, 2); ok {
		t.Error("Swap has no value here")
	}
}

func TestCmp(t *testing.T) {
	for _, c := range []struct {
		op   asm.JumpOp
		w    int
		a, b uint64
		want bool
	}{
		{asm.JSGT, 64, 1, ^uint64(0), true},  // 1 > -1
		{asm.JGT, 64, 1, ^uint64(0), false},  // unsigned
		{asm.JSLT, 32, 0x80000000, 0, true},  // negative in 32 bits
		{asm.JSLT, 64, 0x80000000, 0, false}, // positive in 64 bits
		{asm.JEq, 32, 0x100000005, 5, true},  // upper bits ignored
		{asm.JSet, 64, 6, 2, true},
		{asm.JSet, 64, 4, 2, false},
	} {
		got, ok := Cmp(c.op, c.w, c.a, c.b)
		if !ok || got != c.want {
			t.Errorf("%v/%d %#x, %#x = %v (%v), want %v", c.op, c.w, c.a, c.b, got, ok, c.want)
		}
	}
}
