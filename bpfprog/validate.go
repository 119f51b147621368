package bpfprog

import (
	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
)

// The encoding rules the kernel checks before its verifier simulates a
// program (kernel/bpf/verifier.c: resolve_pseudo_ldimm64, check_subprogs,
// check_alu_op, do_check), applied before any analysis sees an
// instruction. Each rejection is an InvalidError naming the instruction.

// maxInsns is BPF_COMPLEXITY_LIMIT_INSNS, the most instructions a program
// loaded by root may hold.
const maxInsns = 1_000_000

// lastHelper is the highest helper id this build knows
// (bpf_cgrp_storage_delete, Linux 6.2).
const lastHelper = asm.FnCgrpStorageDelete

// pseudoMapIdxValue is BPF_PSEUDO_MAP_IDX_VALUE, the highest kind of a
// 64-bit immediate load.
const pseudoMapIdxValue = asm.Register(6)

// validate checks the encoding of every instruction, the function
// boundaries and the maps the program references.
func (p *Program) validate() error {
	if len(p.Insns) > maxInsns {
		return p.Invalid(-1, "%d instructions, more than the kernel's limit of %d", len(p.Insns), maxInsns)
	}
	for i := range p.Insns {
		if msg := p.encoding(i); msg != "" {
			return p.Invalid(i, "%s", msg)
		}
		if msg := p.control(i); msg != "" {
			return p.Invalid(i, "%s", msg)
		}
	}
	for _, f := range p.Funcs {
		last := p.Insns[f.End-1].OpCode
		if op := last.JumpOp(); last.Class() != asm.JumpClass || (op != asm.Exit && op != asm.Ja) {
			return p.Invalid(f.End-1, "last instruction of function %s is neither an exit nor a jump", f.Name)
		}
	}
	for _, name := range MapNames(p.Maps) {
		if err := p.validateMap(p.Maps[name]); err != nil {
			return err
		}
	}
	return nil
}

// encoding checks the fields one instruction reserves, and returns what
// is wrong or "".
func (p *Program) encoding(i int) string {
	ins := p.Insns[i]
	op := ins.OpCode
	if ins.Dst > asm.R10 || ins.Src > asm.R10 && !usesSrcAsKind(ins) {
		return "register number above R10"
	}
	switch cls := op.Class(); {
	case cls.IsALU():
		return aluEncoding(ins)
	case cls.IsJump():
		return jumpEncoding(ins)
	case cls == asm.LdClass:
		return p.ldEncoding(ins)
	case cls == asm.LdXClass:
		switch {
		case op.Mode() != asm.MemMode && op.Mode() != asm.MemSXMode:
			return "BPF_LDX with a mode other than MEM or MEMSX"
		case op.Mode() == asm.MemSXMode && op.Size() == asm.DWord:
			return "BPF_LDX|BPF_MEMSX of 8 bytes (sign extension needs a narrower load)"
		case ins.Constant != 0:
			return "BPF_LDX uses reserved fields (imm)"
		case ins.Dst == asm.R10:
			return "BPF_LDX into R10, the read-only frame pointer"
		}
	case cls == asm.StClass:
		switch {
		case op.Mode() != asm.MemMode:
			return "BPF_ST with a mode other than MEM"
		case ins.Src != 0:
			return "BPF_ST uses reserved fields (src)"
		}
	case cls == asm.StXClass:
		switch op.Mode() {
		case asm.MemMode:
			if ins.Constant != 0 {
				return "BPF_STX uses reserved fields (imm)"
			}
		case asm.AtomicMode:
			if op.Size() != asm.Word && op.Size() != asm.DWord {
				return "atomic operation on a size other than 4 or 8 bytes"
			}
			switch ins.Constant {
			case 0x00, 0x01, 0x40, 0x41, 0x50, 0x51, 0xa0, 0xa1, 0xe1, 0xf1:
			default:
				return "BPF_ATOMIC with an invalid atomic operation"
			}
		default:
			return "BPF_STX with a mode other than MEM or ATOMIC"
		}
	}
	return ""
}

// usesSrcAsKind reports instructions whose src field is a kind rather
// than a register: 64-bit immediate loads and calls.
func usesSrcAsKind(ins asm.Instruction) bool {
	return ins.OpCode.IsDWordLoad() || ins.OpCode.JumpOp() == asm.Call || ins.OpCode.JumpOp() == asm.JCOND
}

func aluEncoding(ins asm.Instruction) string {
	op := ins.OpCode
	alu := op.ALUOp()
	is64 := op.Class() == asm.ALU64Class
	reg := op&0x08 != 0 // BPF_X
	width := int64(32)
	if is64 {
		width = 64
	}
	if ins.Dst == asm.R10 {
		return "arithmetic on R10, the read-only frame pointer"
	}
	switch alu {
	case asm.Neg:
		if reg || ins.Src != 0 || ins.Offset != 0 || ins.Constant != 0 {
			return "BPF_NEG uses reserved fields"
		}
		return ""
	case asm.Swap:
		if ins.Src != 0 || ins.Offset != 0 || (ins.Constant != 16 && ins.Constant != 32 && ins.Constant != 64) || (is64 && reg) {
			return "BPF_END uses reserved fields"
		}
		return ""
	case asm.MovSX8, asm.MovSX16, asm.MovSX32:
		if !reg || ins.Constant != 0 || ins.Offset != 0 || (!is64 && alu == asm.MovSX32) {
			return "BPF_MOVSX uses reserved fields"
		}
		return ""
	case asm.Add, asm.Sub, asm.Mul, asm.Div, asm.SDiv, asm.Or, asm.And, asm.LSh, asm.RSh,
		asm.Mod, asm.SMod, asm.Xor, asm.Mov, asm.ArSh:
	default:
		return "invalid BPF_ALU operation"
	}
	switch {
	case ins.Offset != 0:
		return "BPF_ALU uses reserved fields (off)"
	case reg && ins.Constant != 0:
		return "BPF_ALU uses reserved fields (imm with a register source)"
	case reg:
		return ""
	case ins.Src != 0:
		return "BPF_ALU uses reserved fields (src with an immediate source)"
	}
	switch alu {
	case asm.Div, asm.SDiv, asm.Mod, asm.SMod:
		if ins.Constant == 0 {
			return "division by zero"
		}
	case asm.LSh, asm.RSh, asm.ArSh:
		if ins.Constant < 0 || ins.Constant >= width {
			return "shift by an immediate outside [0, width)"
		}
	}
	return ""
}

func jumpEncoding(ins asm.Instruction) string {
	op := ins.OpCode
	reg := op&0x08 != 0
	is32 := op.Class() == asm.Jump32Class
	switch jop := op.JumpOp(); jop {
	case asm.Call:
		if reg || ins.Offset != 0 && ins.Src != asm.PseudoKfuncCall || ins.Dst != 0 {
			return "BPF_CALL uses reserved fields"
		}
		switch ins.Src {
		case asm.R0:
			if fn := asm.BuiltinFunc(ins.Constant); fn < 1 || fn > lastHelper {
				return "call to unknown helper"
			}
		case asm.PseudoCall, asm.PseudoKfuncCall:
		default:
			return "BPF_CALL uses reserved fields (src)"
		}
	case asm.Exit:
		if reg || ins.Src != 0 || ins.Dst != 0 || ins.Constant != 0 { // the kernel ignores off
			return "BPF_EXIT uses reserved fields"
		}
	case asm.Ja:
		switch {
		case reg || ins.Src != 0 || ins.Dst != 0:
			return "BPF_JA uses reserved fields"
		case !is32 && ins.Constant != 0:
			return "BPF_JA uses reserved fields (imm)"
		case is32 && ins.Offset != 0:
			return "BPF_JMP32|BPF_JA uses reserved fields (off)"
		}
	case asm.JCOND:
		if is32 || reg || ins.Src != asm.PseudoMayGoto || ins.Dst != 0 || ins.Constant != 0 {
			return "BPF_JCOND uses reserved fields"
		}
	case asm.JEq, asm.JGT, asm.JGE, asm.JSet, asm.JNE, asm.JSGT, asm.JSGE, asm.JLT, asm.JLE, asm.JSLT, asm.JSLE:
		if reg && ins.Constant != 0 {
			return "conditional jump uses reserved fields (imm with a register source)"
		}
		if !reg && ins.Src != 0 {
			return "conditional jump uses reserved fields (src with an immediate source)"
		}
	default:
		if is32 && (op&0xf0 == 0x80 || op&0xf0 == 0x90) {
			return "BPF_JMP32 has no call or exit"
		}
		return "invalid jump operation"
	}
	return ""
}

func (p *Program) ldEncoding(ins asm.Instruction) string {
	op := ins.OpCode
	switch op.Mode() {
	case asm.ImmMode:
		switch {
		case op.Size() != asm.DWord:
			return "BPF_LD|BPF_IMM of a size other than 8 bytes"
		case ins.Offset != 0:
			return "BPF_LD_IMM64 uses reserved fields (off)"
		case ins.Dst == asm.R10:
			return "BPF_LD_IMM64 into R10, the read-only frame pointer"
		case ins.Src > pseudoMapIdxValue:
			return "BPF_LD_IMM64 of an unknown kind"
		case ins.Src == asm.PseudoFunc && p.FuncByName(ins.Reference()) < 0:
			return "BPF_LD_IMM64 of a function the program does not hold"
		}
	case asm.AbsMode, asm.IndMode:
		switch p.Type {
		case ebpf.SocketFilter, ebpf.SchedCLS, ebpf.SchedACT:
		default:
			return "BPF_LD_ABS/BPF_LD_IND are not available to " + p.Type.String() + " programs"
		}
		if op.Size() == asm.DWord || ins.Dst != 0 || ins.Offset != 0 || (op.Mode() == asm.AbsMode && ins.Src != 0) {
			return "BPF_LD_ABS/BPF_LD_IND uses reserved fields"
		}
	default:
		return "BPF_LD with an invalid mode"
	}
	return ""
}

// control checks that jumps land on an instruction of their own function
// and that calls name a function of the program.
func (p *Program) control(i int) string {
	ins := p.Insns[i]
	if !ins.OpCode.Class().IsJump() {
		return ""
	}
	switch op := ins.OpCode.JumpOp(); op {
	case asm.Exit:
		return ""
	case asm.Call:
		if ins.Src == asm.PseudoCall && p.FuncByName(ins.Reference()) < 0 {
			return "call to a function the program does not hold"
		}
		return ""
	}
	t, raw, ok := p.JumpTarget(i)
	last := len(p.Insns) - 1
	end := int64(p.Offsets[last]) + int64(p.Insns[last].Size()/asm.InstructionSize)
	switch {
	case !ok && raw >= 0 && raw < end:
		return "jump into the middle of a 64-bit immediate load"
	case !ok:
		return "jump outside the program"
	case p.FuncOf(t) != p.FuncOf(i):
		return "jump outside its function"
	}
	return ""
}
