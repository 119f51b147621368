package nfp

import (
	"fmt"

	"github.com/cilium/ebpf/asm"
)

var aluNames = map[asm.ALUOp]string{asm.And: "and", asm.Or: "or", asm.Xor: "xor", asm.Add: "add", asm.Sub: "sub"}

func (a *Prog) alu64(i int, ins asm.Instruction) Seq {
	ins = negAddSub(ins)
	op := ins.OpCode
	imm := op.Source() == asm.ImmSource
	lo, hi := uint32(ins.Constant), uint32(uint64(ins.Constant)>>32)
	s := Seq{}
	switch aop := op.ALUOp(); aop {
	case asm.Mov:
		switch {
		case imm:
			s.From = "mov_imm64"
			s.add(immedLen(lo) + immedLen(hi))
		case ins.Src == asm.R10:
			s.From = "mov_reg64"
			s.add(urImm(uint32(a.depth[a.p.FuncOf(i)])) + 1 + 1)
		default:
			s.From = "mov_reg64"
			s.add(2)
		}
	case asm.And, asm.Or, asm.Xor:
		s.From = aluNames[aop] + "_reg64"
		if imm {
			s.From = aluNames[aop] + "_imm64"
			s.add(aluImm(aluNames[aop], lo) + aluImm(aluNames[aop], hi))
		} else {
			s.add(2)
		}
	case asm.Add, asm.Sub:
		s.From = aluNames[aop] + "_reg64"
		if imm {
			s.From = aluNames[aop] + "_imm64"
			s.add(urImm(lo) + 1 + urImm(hi) + 1)
		} else {
			s.add(2)
		}
	case asm.Mul:
		s.From = "wrp_mul"
		s.add(a.mulLen(i, ins, true))
	case asm.Div:
		return a.div(i, ins)
	case asm.Neg:
		s.From = "neg_reg64"
		s.add(2)
	case asm.LSh, asm.RSh, asm.ArSh:
		return a.shift64(i, ins)
	default:
		return Seq{From: "instr_cb", Unsupported: fmt.Sprintf("%v has no entry in the JIT's instruction table", aop)}
	}
	return s
}

func (a *Prog) alu32(i int, ins asm.Instruction) Seq {
	ins = negAddSub(ins)
	op := ins.OpCode
	imm := op.Source() == asm.ImmSource
	v := uint32(ins.Constant)
	s := Seq{}
	switch aop := op.ALUOp(); aop {
	case asm.Mov:
		if imm {
			s.From = "mov_imm"
			s.add(immedLen(v) + 1)
		} else {
			s.From = "mov_reg"
			s.add(2)
		}
		return s
	case asm.And, asm.Or, asm.Xor, asm.Add, asm.Sub:
		if imm {
			s.From = "wrp_alu32_imm"
			s.add(aluImm(aluNames[aop], v))
		} else {
			s.From = "wrp_alu32_reg"
			s.add(1)
		}
	case asm.Mul:
		s.From = "wrp_mul"
		s.add(a.mulLen(i, ins, false))
		return s
	case asm.Div:
		return a.div(i, ins)
	case asm.Neg:
		s.From = "neg_reg"
		s.add(1)
	case asm.LSh, asm.RSh, asm.ArSh:
		amt, known := v, imm
		if !imm {
			c, ok := a.constant(i, ins.Src)
			amt, known = uint32(c), ok
		}
		s.From = map[asm.ALUOp]string{asm.LSh: "shl_imm", asm.RSh: "shr_imm", asm.ArSh: "ashr_imm"}[aop]
		switch {
		case !known:
			s.From = map[asm.ALUOp]string{asm.LSh: "shl_reg", asm.RSh: "shr_reg", asm.ArSh: "ashr_reg"}[aop]
			s.add(2)
		case amt != 0 && aop == asm.ArSh:
			s.add(2)
		case amt != 0:
			s.add(1)
		}
	case asm.Swap:
		s.From = "end_reg32"
		if op.Endianness() != asm.BE {
			s.Unsupported = "only conversions to big endian are in the JIT's table"
		}
		switch ins.Constant {
		case 64:
			s.add(5)
		default:
			s.add(3)
		}
		return s
	default:
		return Seq{From: "instr_cb", Unsupported: fmt.Sprintf("%v has no entry in the JIT's instruction table", aop)}
	}
	s.add(a.zextLen(i))
	return s
}

// negAddSub is nfp_bpf_opt_neg_add_sub: an add or sub of a negative
// immediate becomes the other operation of its absolute value, which is
// more often small enough for the instruction's own operand (ur_load_imm_any
// encodes up to 0xff without an immed), and its upper word is zero instead
// of all ones. The JIT negates the 32-bit immediate, so -2^31 stays itself
// (its operation is flipped all the same).
func negAddSub(ins asm.Instruction) asm.Instruction {
	op := ins.OpCode
	if op.Source() != asm.ImmSource || int32(ins.Constant) >= 0 {
		return ins
	}
	switch op.ALUOp() {
	case asm.Add:
		ins.OpCode = op.SetALUOp(asm.Sub)
	case asm.Sub:
		ins.OpCode = op.SetALUOp(asm.Add)
	default:
		return ins
	}
	ins.Constant = int64(-int32(ins.Constant))
	return ins
}

// mulLen is wrp_mul: a 16x16 multiply when both operands are known to fit
// 16 bits, else 32x32 with the upper word (64-bit) or an immed zeroing it.
func (a *Prog) mulLen(i int, ins asm.Instruction, wide bool) int {
	n := 0
	small := false
	if ins.OpCode.Source() == asm.ImmSource {
		n += urImm(uint32(ins.Constant))
		if c, ok := a.constant(i, ins.Dst); ok {
			small = uint64(c) <= 0xffff && uint64(uint32(ins.Constant)) <= 0xffff
		}
	}
	if small {
		return n + 4
	}
	return n + 7
}

// div is wrp_div_imm: division by a constant, by a shift for powers of two
// and by reciprocal multiplication otherwise (the longest form counted).
func (a *Prog) div(i int, ins asm.Instruction) Seq {
	s := Seq{From: "wrp_div_imm"}
	d, ok := uint64(uint32(ins.Constant)), true
	if ins.OpCode.Source() == asm.RegSource {
		var c int64
		c, ok = a.constant(i, ins.Src)
		d = uint64(c)
	}
	switch {
	case !ok:
		s.Unsupported = "division by a register the verifier cannot prove constant"
		s.add(13)
	case d > 1<<31:
		s.add(urImm(uint32(d)) + 3)
	case d&(d-1) == 0:
		s.add(2 + 1)
	default:
		s.add(2 + 7 + 4)
	}
	return s
}

// shift64 follows the 64-bit shifts: two shf for amounts below 32, a move
// or shf and an immed otherwise; a register amount of unknown range takes
// the runtime choice between both (the longer way counted).
func (a *Prog) shift64(i int, ins asm.Instruction) Seq {
	op := ins.OpCode
	names := map[asm.ALUOp]string{asm.LSh: "shl", asm.RSh: "shr", asm.ArSh: "ashr"}
	s := Seq{From: "__" + names[op.ALUOp()] + "_imm64"}
	amt, known := uint32(ins.Constant), true
	if op.Source() == asm.RegSource {
		c, ok := a.constant(i, ins.Src)
		amt, known = uint32(c), ok
	}
	switch {
	case !known:
		s.From = names[op.ALUOp()] + "_reg64"
		// br_bset, the <32 sequence (3 + 2 in defer slots), the branch
		// over the >=32 sequence (3).
		s.Insns = 1 + 3 + 1 + 2 + 3
		s.Cycles = CyclesNotTaken + 3 + CyclesTaken + 2
		if op.ALUOp() == asm.ArSh {
			s.Insns, s.Cycles = s.Insns+1, s.Cycles+1
		}
	case amt == 0:
	case op.ALUOp() == asm.ArSh:
		s.add(3)
		if amt == 32 {
			s.Insns, s.Cycles = 2, 2
		}
	default:
		s.add(2)
	}
	return s
}
