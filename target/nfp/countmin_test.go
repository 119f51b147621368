package nfp

import (
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/dpperf/dpperf/bpfprog"
)

// step is one BPF instruction of a pinned body and the NFP code jit.c
// emits for it.
type step struct {
	ins    asm.Instruction
	region Region
	insns  int
	from   string
}

// countMinRow is one row of examples/xdp/countmin.c as clang -O2 emits it
// (instructions 62–101 of countmin.o: the hash of row 1, its key, the
// lookup and the increment). Each count is read off jit.c (Linux 6.1):
//
//   - mov_reg64: two wrp_reg_mov, one per half.
//   - xor_imm64 with 0x9e3779b8: wrp_alu_imm on the low word needs
//     ur_load_imm_any, and 0x9e3779b8 packs neither itself nor its
//     complement into 16 bits (pack_immed), so two immed and the xor; the
//     sign-extended upper word is ~0, a single not. 4.
//   - mul by a 32-bit constant above 0xffff: ur_load_imm_any (2 immed) and
//     wrp_mul_u32 with the high half (start, four 32x32 steps, last,
//     last_2). 9.
//   - xor/and/or of registers: one alu per half. 2.
//   - 64-bit right shift by 13, 15 or 16: two shf (__shr_imm64). 2.
//   - ld_imm64 0xffff0000 / 0xffff8000: one immed each for the low word
//     (it or its complement packs) and one for the zero high word. 2.
//   - xor_imm64 with 1: the operand is encoded in the alu; the high word's
//     xor with 0 is skipped. 1.
//   - and_imm64 with 4095: immed and alu for the low word, immed of 0 for
//     the high word (an and with 0). 3.
//   - or_imm64 with 4096: immed and alu; the high word's or with 0 is
//     skipped. 2.
//   - the key's store to fp-4 (frame depth 8, so LM offset 4, inside the
//     64 bytes LMaddr0 reaches): one alu for the whole word. 1.
//   - r2 = r10: add of the frame depth (8 fits the operand) to the stack
//     pointer, immed 0 for the high word. 2.
//   - r2 += -4: nfp_bpf_opt_neg_add_sub turns it into sub 4, so both
//     halves take their operand directly (sub, sub with carry). 2.
//   - the map pointer (replaced by the map id, high word 0): 2 immed.
//   - the lookup (raw DRAM array, the paper's driver, not in jit.c): key
//     move, immed and compare with max_entries, branch, shift, base immed
//     ×2, add, add with carry. 9.
//   - if r0 == 0 (jeq_imm with 0): an or of the halves and the branch. 2.
//   - r1 = 1: mov_imm64, an immed per half. 2.
//   - lock add of r1 = 1 at offset 0: the value is known to fit 16 bits,
//     so only the add_imm path: an immed of the indirect reference (0xc90
//     packs), ld_field of the value, the command. 3 (jit.c's own offset
//     arithmetic: out += 3).
func countMinRow() []step {
	return []step{
		{asm.Mov.Reg(asm.R1, asm.R7), 0, 2, "mov_reg64"},
		{asm.Xor.Imm(asm.R1, -1640531528), 0, 4, "xor_imm64"},
		{asm.Mul.Imm(asm.R1, -2048144789), 0, 9, "wrp_mul"},
		{asm.Mov.Reg(asm.R2, asm.R1), 0, 2, "mov_reg64"},
		{asm.Xor.Reg(asm.R2, asm.R8), 0, 2, "xor_reg64"},
		{asm.And.Reg(asm.R1, asm.R9), 0, 2, "and_reg64"},
		{asm.RSh.Imm(asm.R1, 13), 0, 2, "__shr_imm64"},
		{asm.Xor.Reg(asm.R2, asm.R1), 0, 2, "xor_reg64"},
		{asm.Mul.Imm(asm.R2, -1028477387), 0, 9, "wrp_mul"},
		{asm.Mov.Reg(asm.R1, asm.R6), 0, 2, "mov_reg64"},
		{asm.Xor.Reg(asm.R1, asm.R2), 0, 2, "xor_reg64"},
		{asm.LoadImm(asm.R3, 0xffff0000, asm.DWord), 0, 2, "imm_ld8_part2"},
		{asm.And.Reg(asm.R2, asm.R3), 0, 2, "and_reg64"},
		{asm.RSh.Imm(asm.R2, 16), 0, 2, "__shr_imm64"},
		{asm.Xor.Reg(asm.R1, asm.R2), 0, 2, "xor_reg64"},
		{asm.Mul.Imm(asm.R1, 668265263), 0, 9, "wrp_mul"},
		{asm.Mov.Reg(asm.R2, asm.R1), 0, 2, "mov_reg64"},
		{asm.LoadImm(asm.R3, 0xffff8000, asm.DWord), 0, 2, "imm_ld8_part2"},
		{asm.And.Reg(asm.R2, asm.R3), 0, 2, "and_reg64"},
		{asm.RSh.Imm(asm.R2, 15), 0, 2, "__shr_imm64"},
		{asm.Xor.Reg(asm.R1, asm.R2), 0, 2, "xor_reg64"},
		{asm.Xor.Imm(asm.R1, 1), 0, 1, "xor_imm64"},
		{asm.Mul.Imm(asm.R1, 374761393), 0, 9, "wrp_mul"},
		{asm.Mov.Reg(asm.R2, asm.R1), 0, 2, "mov_reg64"},
		{asm.And.Reg(asm.R2, asm.R9), 0, 2, "and_reg64"},
		{asm.RSh.Imm(asm.R2, 13), 0, 2, "__shr_imm64"},
		{asm.Xor.Reg(asm.R2, asm.R1), 0, 2, "xor_reg64"},
		{asm.Mov.Reg(asm.R1, asm.R2), 0, 2, "mov_reg64"},
		{asm.RSh.Imm(asm.R1, 16), 0, 2, "__shr_imm64"},
		{asm.Xor.Reg(asm.R1, asm.R2), 0, 2, "xor_reg64"},
		{asm.And.Imm(asm.R1, 4095), 0, 3, "and_imm64"},
		{asm.Or.Imm(asm.R1, 4096), 0, 2, "or_imm64"},
		{asm.StoreMem(asm.R10, -4, asm.R1, asm.Word), Stack, 1, "mem_op_stack"},
		{asm.Mov.Reg(asm.R2, asm.R10), 0, 2, "mov_reg64"},
		{asm.Add.Imm(asm.R2, -4), 0, 2, "sub_imm64"},
		{asm.LoadMapPtr(asm.R1, 0), 0, 2, "imm_ld8_part2"},
		{asm.FnMapLookupElem.Call(), 0, 9, "raw array lookup (paper §4.2)"},
		{asm.Instruction{OpCode: asm.JEq.Op(asm.ImmSource), Dst: asm.R0, Offset: 2}, 0, 2, "jeq_imm"},
		{asm.Mov.Imm(asm.R1, 1), 0, 2, "mov_imm64"},
		{atomicAdd(asm.R0, asm.R1), MapValue, 3, "mem_xadd"},
	}
}

// countMinRowJIT is the row's count without the raw lookup, which jit.c
// does not emit (the stock driver calls the firmware instead): four
// multiplies of 9; the xor with 0x9e3779b8 (4), with 1 (1); the and with
// 4095 (3), the or with 4096 (2); the store (1) and the atomic add (3);
// and 29 two-instruction sequences: 7 register moves, 7 xor and 4 and of
// registers, 5 shifts, 3 ld_imm64 (the map's included), the sub, the jeq
// and the mov of 1. Before the add of -4 followed nfp_bpf_opt_neg_add_sub
// and the add_imm's reference took one immed, the row counted 111.
const countMinRowJIT = 4*9 + 4 + 1 + 3 + 2 + 1 + 3 + 29*2

func atomicAdd(dst, src asm.Register) asm.Instruction {
	ins := asm.StoreMem(dst, 0, src, asm.DWord)
	ins.OpCode = asm.OpCode(asm.StXClass).SetMode(asm.AtomicMode).SetSize(asm.DWord)
	ins.Constant = int64(asm.Add)
	return ins
}

// TestCountMinRow pins each instruction of a Count-Min row to jit.c's
// sequence and the row's total to the count derived from jit.c.
func TestCountMinRow(t *testing.T) {
	arr := &bpfprog.Map{Name: "m", Type: ebpf.Array, KeySize: 4, ValueSize: 8, MaxEntries: 5 * 4096}
	steps := countMinRow()
	insns := asm.Instructions{}
	regions := []Region{}
	maps := []*bpfprog.Map{}
	for _, s := range steps {
		insns = append(insns, s.ins)
		regions = append(regions, s.region)
		maps = append(maps, nil)
	}
	lookup := len(steps) - 4
	maps[lookup] = arr
	insns = append(insns, asm.Mov.Imm(asm.R0, 2), asm.Return())
	p := prog(t, insns, map[string]*bpfprog.Map{"m": arr})
	a := Analyze(p, regions, maps)
	total := 0
	for i, s := range steps {
		got := a.Insn(i)
		total += got.Insns
		if got.Insns != s.insns || got.From != s.from {
			t.Errorf("%v: %d instructions from %s, want %d from %s", s.ins, got.Insns, got.From, s.insns, s.from)
		}
	}
	if jit := total - a.Insn(lookup).Insns; jit != countMinRowJIT {
		t.Errorf("row without the lookup: %d NFP instructions, jit.c emits %d", jit, countMinRowJIT)
	}
}
