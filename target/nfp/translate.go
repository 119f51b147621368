package nfp

import (
	"github.com/cilium/ebpf/asm"
)

// Insn returns the NFP code of instruction i (the first slot of a 64-bit
// immediate load carries both halves).
func (a *Prog) Insn(i int) Seq {
	switch {
	case a.copies[i] != nil:
		return a.memcpyRead(a.copies[i])
	case a.copyOf[i] != nil:
		return a.memcpyWrite(a.copyOf[i])
	case a.merged[i]:
		return Seq{From: "nfp_bpf_opt_ldst_gather"} // carried by its run's first pair
	}
	ins := a.p.Insns[i]
	op := ins.OpCode
	switch cls := op.Class(); {
	case cls == asm.ALU64Class:
		return a.alu64(i, ins)
	case cls == asm.ALUClass:
		return a.alu32(i, ins)
	case cls == asm.LdClass && op.Mode() == asm.ImmMode:
		s := Seq{From: "imm_ld8_part2"}
		lo, hi := uint32(ins.Constant), uint32(uint64(ins.Constant)>>32)
		s.add(immedLen(lo))
		if hi == lo {
			s.add(1)
		} else {
			s.add(immedLen(hi))
		}
		return s
	case cls == asm.LdClass:
		return a.ldClassic(i, ins)
	case cls == asm.LdXClass:
		return a.load(i, ins)
	case cls == asm.StClass, cls == asm.StXClass:
		if op.Mode() == asm.AtomicMode {
			return a.atomic(i, ins)
		}
		return a.store(i, ins)
	case cls.IsJump():
		return a.jump(i, ins)
	}
	return Seq{Unsupported: "not a BPF instruction the nfp JIT knows"}
}

// Instructions counts the NFP instructions of the whole program: every BPF
// instruction's sequence, the prologue, the XDP exit path, the callee
// register save and restore routines when a callee needs them, and the
// instruction-store prefetch padding (nfp_translate).
func (a *Prog) Instructions() int {
	n := IntroInsns + outroInsns + prefetchPad
	push := false
	for i := range a.p.Insns {
		n += a.Insn(i).Insns
		if f := a.p.FuncOf(i); f > 0 && i == a.p.Funcs[f].Start {
			n++ // nfp_subprog_prologue: save the return address
			push = push || a.usesCalleeSaved(f)
		}
	}
	if push {
		n += 2 * 9 // nfp_push_callee_registers, nfp_pop_callee_registers
	}
	return n
}

const (
	outroInsns  = 13 // nfp_outro_xdp
	prefetchPad = 8  // NFP_USTORE_PREFETCH_WINDOW nops
)

// usesCalleeSaved says whether function f writes R6–R9 (needs_reg_push).
func (a *Prog) usesCalleeSaved(f int) bool {
	fn := a.p.Funcs[f]
	for _, ins := range a.p.Insns[fn.Start:fn.End] {
		_, _, defs := reads(ins)
		for _, d := range defs {
			if d >= asm.R6 && d <= asm.R9 {
				return true
			}
		}
	}
	return false
}

func (a *Prog) zextLen(i int) int {
	if a.zext[i] {
		return 1
	}
	return 0
}
