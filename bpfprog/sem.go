package bpfprog

import "github.com/cilium/ebpf/asm"

// The concrete semantics of BPF arithmetic and comparisons, shared by the
// engines that evaluate instructions: the concrete interpreter (interp),
// the constant folding of the symbolic executor (symex) and the abstract
// interpretation that unrolls loops (cfg).

// SignExtend sign-extends the low w bits of v to 64 bits.
func SignExtend(v uint64, w int) int64 {
	s := 64 - w
	return int64(v<<s) >> s
}

func mask(w int) uint64 {
	if w >= 64 {
		return ^uint64(0)
	}
	return 1<<w - 1
}

// ALU computes "a op b" on w-bit operands (32 or 64 for instructions) as
// the kernel does: division by zero gives 0, modulo by zero leaves a,
// signed MIN / -1 wraps to MIN and MIN % -1 is 0, shift counts are taken
// modulo w, and the result is masked to w bits. Mov returns b and Neg -a.
// ok is false for operations without a concrete value here (Swap, the
// sign-extending moves), which callers handle themselves.
func ALU(op asm.ALUOp, w int, a, b uint64) (r uint64, ok bool) {
	m := mask(w)
	a, b = a&m, b&m
	sa, sb := SignExtend(a, w), SignExtend(b, w)
	shift := b & uint64(w-1)
	switch op {
	case asm.Add:
		r = a + b
	case asm.Sub:
		r = a - b
	case asm.Mul:
		r = a * b
	case asm.Div:
		if b != 0 {
			r = a / b
		}
	case asm.SDiv:
		switch sb {
		case 0:
		case -1:
			r = uint64(-sa)
		default:
			r = uint64(sa / sb)
		}
	case asm.Mod:
		r = a
		if b != 0 {
			r = a % b
		}
	case asm.SMod:
		switch sb {
		case 0:
			r = a
		case -1:
		default:
			r = uint64(sa % sb)
		}
	case asm.Or:
		r = a | b
	case asm.And:
		r = a & b
	case asm.Xor:
		r = a ^ b
	case asm.LSh:
		r = a << shift
	case asm.RSh:
		r = a >> shift
	case asm.ArSh:
		r = uint64(sa >> shift)
	case asm.Neg:
		r = -a
	case asm.Mov:
		r = b
	default:
		return 0, false
	}
	return r & m, true
}

// Cmp decides the conditional jump "a op b" on w-bit operands; ok is false
// for operations that are not comparisons.
func Cmp(op asm.JumpOp, w int, a, b uint64) (taken, ok bool) {
	m := mask(w)
	a, b = a&m, b&m
	sa, sb := SignExtend(a, w), SignExtend(b, w)
	switch op {
	case asm.JEq:
		return a == b, true
	case asm.JNE:
		return a != b, true
	case asm.JGT:
		return a > b, true
	case asm.JGE:
		return a >= b, true
	case asm.JLT:
		return a < b, true
	case asm.JLE:
		return a <= b, true
	case asm.JSGT:
		return sa > sb, true
	case asm.JSGE:
		return sa >= sb, true
	case asm.JSLT:
		return sa < sb, true
	case asm.JSLE:
		return sa <= sb, true
	case asm.JSet:
		return a&b != 0, true
	}
	return false, false
}

// Mirror gives the comparison with its operands exchanged: "a op b" is
// "b Mirror(op) a".
func Mirror(op asm.JumpOp) asm.JumpOp {
	switch op {
	case asm.JGT:
		return asm.JLT
	case asm.JGE:
		return asm.JLE
	case asm.JLT:
		return asm.JGT
	case asm.JLE:
		return asm.JGE
	case asm.JSGT:
		return asm.JSLT
	case asm.JSGE:
		return asm.JSLE
	case asm.JSLT:
		return asm.JSGT
	case asm.JSLE:
		return asm.JSGE
	}
	return op
}

// Negate gives the comparison that holds exactly when op does not, or
// asm.InvalidJumpOp for an operation that is not a comparison of two
// operands with a negation among the jumps (JSet).
func Negate(op asm.JumpOp) asm.JumpOp {
	switch op {
	case asm.JEq:
		return asm.JNE
	case asm.JNE:
		return asm.JEq
	case asm.JGT:
		return asm.JLE
	case asm.JGE:
		return asm.JLT
	case asm.JLT:
		return asm.JGE
	case asm.JLE:
		return asm.JGT
	case asm.JSGT:
		return asm.JSLE
	case asm.JSGE:
		return asm.JSLT
	case asm.JSLT:
		return asm.JSGE
	case asm.JSLE:
		return asm.JSGT
	}
	return asm.InvalidJumpOp
}

// Signed gives the signed counterpart of an unsigned ordering, and any
// other comparison as it is.
func Signed(op asm.JumpOp) asm.JumpOp {
	switch op {
	case asm.JGT:
		return asm.JSGT
	case asm.JGE:
		return asm.JSGE
	case asm.JLT:
		return asm.JSLT
	case asm.JLE:
		return asm.JSLE
	}
	return op
}
