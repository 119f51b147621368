package nfp

import "github.com/cilium/ebpf/asm"

// jump follows the jump table: compares are alu instructions on the low
// and, for 64-bit jumps, high words, then a branch.
func (a *Prog) jump(i int, ins asm.Instruction) Seq {
	op := ins.OpCode
	jop := op.JumpOp()
	wide := op.Class() == asm.JumpClass
	imm := op.Source() == asm.ImmSource
	if imm && ins.Constant < 0 && (jop == asm.JGE || jop == asm.JSGE || jop == asm.JLT || jop == asm.JSLT) {
		// nfp_bpf_opt_neg_add_sub: cmp_imm adds the absolute value
		// (jump_neg_op) instead of subtracting the negative one.
		ins.Constant = int64(-int32(ins.Constant))
	}
	lo, hi := uint32(ins.Constant), uint32(uint64(ins.Constant)>>32)
	s := Seq{}
	switch jop {
	case asm.Ja:
		s.From = "jump"
		s.branch()
		return s
	case asm.Exit:
		if a.p.FuncOf(i) == 0 {
			s.From = "goto_out"
			s.branch()
			return s
		}
		s.From = "nfp_subprog_epilogue"
		s.add(1)
		s.branch()
		if a.usesCalleeSaved(a.p.FuncOf(i)) {
			s.add(8) // nfp_pop_callee_registers
		}
		return s
	case asm.Call:
		if ins.IsFunctionCall() {
			return a.call(i)
		}
		return a.helper(i, asm.BuiltinFunc(ins.Constant))
	}
	// The conditional branch itself is priced by the edge; it is one
	// instruction here.
	s.Insns = 1
	switch {
	case jop == asm.JEq && imm && wide:
		s.From = "jeq_imm"
		if lo != 0 {
			s.add(urImm(lo) + 1)
		}
		if hi != 0 {
			s.add(urImm(hi) + 1)
		}
		s.add(1)
	case jop == asm.JEq && imm:
		s.From = "jeq32_imm"
		s.add(urImm(lo) + 1)
	case jop == asm.JSet && imm:
		s.From = "jset_imm"
		s.add(urImm(lo) + 1)
		if wide && hi != 0 {
			s.add(1)
		}
	case jop == asm.JNE && imm:
		s.From = "jne_imm"
		switch {
		case ins.Constant == 0:
			s.add(1)
		case !wide:
			s.add(urImm(lo) + 1)
		default:
			// Low word compared and branched first (not taken on the
			// way to the second branch), then the high word.
			s.add(urImm(lo) + 1)
			s.Insns++
			s.Cycles += CyclesNotTaken
			s.add(urImm(hi) + 1)
		}
	case imm:
		s.From = "cmp_imm"
		s.add(urImm(lo) + 1)
		if wide {
			s.add(urImm(hi) + 1)
		}
	case jop == asm.JEq:
		s.From = "jeq_reg"
		s.add(1)
		if wide {
			s.add(2)
		}
	case jop == asm.JSet || jop == asm.JNE:
		s.From = "wrp_test_reg"
		s.add(1)
		if wide {
			s.Insns++
			s.Cycles += CyclesNotTaken
			s.add(1)
		}
	default:
		s.From = "cmp_reg"
		s.add(1)
		if wide {
			s.add(1)
		}
	}
	return s
}
