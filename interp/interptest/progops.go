package interptest

import "github.com/cilium/ebpf/asm"

// The instructions GenProgram draws from, each emitted only where it is
// valid (see GenProgram); one that is not falls back to another. The
// ALU operations of cpu v4 (signed division and modulo, sign-extending
// moves) are left out: cfg does not model them. Sign-extending loads are
// in.

var (
	aluOps  = []asm.ALUOp{asm.Add, asm.Sub, asm.Mul, asm.Div, asm.Mod, asm.Or, asm.And, asm.LSh, asm.RSh, asm.ArSh, asm.Xor, asm.Mov, asm.Neg}
	jumpOps = []asm.JumpOp{asm.JEq, asm.JNE, asm.JGT, asm.JGE, asm.JLT, asm.JLE, asm.JSGT, asm.JSGE, asm.JSLT, asm.JSLE, asm.JSet}
	sizes   = []asm.Size{asm.Byte, asm.Half, asm.Word, asm.DWord}
)

// step emits one instruction, or a short sequence of them.
func (g *gen) step() {
	if g.count(isScalar) < 3 && g.bit() {
		g.seed()
		return
	}
	switch g.n(26) {
	case 4:
		g.emitTo(g.dst(), kScalar, asm.LoadImm(0, int64(g.bytes(8)), asm.DWord))
	case 5:
		g.swap()
	case 6, 7, 8:
		g.cond()
	case 9, 10:
		g.boundsCheck()
	case 11:
		g.varPointer()
	case 12, 13, 14, 15:
		g.packet(false)
	case 16, 17:
		g.packet(true)
	case 18:
		g.stackStore()
	case 19:
		g.stackLoad()
	case 20:
		g.ctxLoad()
	case 21:
		g.exitOrJa()
	case 22, 23:
		g.atomic()
	case 24:
		g.ptrArith()
	default:
		g.alu()
	}
}

// emitTo emits ins with destination d, which then holds a value of kind k.
func (g *gen) emitTo(d asm.Register, k kind, ins asm.Instruction) {
	ins.Dst = d
	g.emit(ins)
	g.st.r[d] = reg{k: k}
}

// seed writes a number to a register, where one is wanted and none
// holds one: what the program receives (packet bytes, the receive queue)
// more often than an immediate, so that values stay symbolic for the
// symbolic executor rather than folding to constants.
func (g *gen) seed() {
	switch c, ok := g.pick(func(r reg) bool { return r.k == kCtx }); {
	case g.n(3) == 0:
	case g.fits(1):
		g.packet(false)
		return
	case ok:
		g.emitTo(g.dst(), kScalar, asm.LoadMem(0, c, 12+4*int16(g.n(2)), asm.Word))
		return
	}
	g.emitTo(g.dst(), kScalar, asm.Mov.Imm(0, g.imm()))
}

func opOf(class asm.Class, op asm.ALUOp, src asm.Source) asm.OpCode {
	return asm.OpCode(class).SetALUOp(op).SetSource(src)
}

func (g *gen) alu() {
	op := aluOps[g.n(len(aluOps))]
	class, w := asm.ALU64Class, int32(64)
	if g.bit() {
		class, w = asm.ALUClass, 32
	}
	if op == asm.Mov && class == asm.ALU64Class && g.bit() {
		// A 64-bit move copies pointers too.
		if s, ok := g.pick(func(r reg) bool { return r.k != kNone }); ok {
			d := g.dst()
			g.emit(asm.Instruction{OpCode: opOf(class, op, asm.RegSource), Dst: d, Src: s})
			g.st.r[d] = g.st.r[s]
			return
		}
	}
	d, ok := g.pick(isScalar)
	if op == asm.Mov {
		d, ok = g.dst(), true
	}
	if !ok {
		g.seed()
		return
	}
	ins := asm.Instruction{OpCode: opOf(class, op, asm.ImmSource), Dst: d}
	if op != asm.Neg {
		if s, ok := g.pick(isScalar); ok && g.bit() {
			ins.OpCode, ins.Src = opOf(class, op, asm.RegSource), s
		} else {
			v := g.imm()
			switch op {
			case asm.LSh, asm.RSh, asm.ArSh:
				v &= w - 1
			case asm.Div, asm.Mod:
				if v == 0 {
					v = 3
				}
			}
			ins.Constant = int64(v)
		}
	}
	g.emitTo(d, kScalar, ins)
}

func (g *gen) swap() {
	d, ok := g.pick(isScalar)
	if !ok {
		g.seed()
		return
	}
	size := sizes[1+g.n(3)]
	var ins asm.Instruction
	switch g.n(3) {
	case 0:
		ins = asm.HostTo(asm.LE, d, size)
	case 1:
		ins = asm.HostTo(asm.BE, d, size)
	default:
		ins = asm.BSwap(d, size)
	}
	g.emitTo(d, kScalar, ins)
}

// cond emits a conditional jump on numbers.
func (g *gen) cond() {
	d, ok := g.pick(isScalar)
	if !ok || len(g.out)+2 > g.end {
		g.seed()
		return
	}
	class := asm.JumpClass
	if g.bit() {
		class = asm.Jump32Class
	}
	op := jumpOps[g.n(len(jumpOps))]
	ins := asm.Instruction{OpCode: asm.OpCode(class).SetJumpOp(op).SetSource(asm.ImmSource), Dst: d}
	if s, ok := g.pick(isScalar); ok && g.bit() {
		ins.OpCode, ins.Src = ins.OpCode.SetSource(asm.RegSource), s
	} else {
		ins.Constant = int64(g.imm())
	}
	i := len(g.out)
	g.jump(ins, g.target(i), g.st)
}

// exitOrJa ends the fall-through with an exit or a forward jump, where a
// jump lands on the next instruction (which would be dead otherwise).
func (g *gen) exitOrJa() {
	i := len(g.out)
	if len(g.pend[i+1]) == 0 {
		g.cond()
		return
	}
	if g.bit() && g.st.r[0].k == kScalar {
		g.emit(asm.Return())
	} else if i+2 <= g.end {
		g.jump(asm.Instruction{OpCode: asm.OpCode(asm.JumpClass).SetJumpOp(asm.Ja)}, g.target(i), g.st)
	} else {
		g.cond()
		return
	}
	g.live = false
}

// epilogue sets R0 and exits: most often to a digest of every number
// the program holds in registers and in the stack, so that a wrong value
// anywhere shows in the verdict; otherwise to one number as it is, in 32
// bits, with its high half folded into the low one, or masked to an XDP
// action.
func (g *gen) epilogue() {
	x, ok := g.pick(isScalar)
	mode := g.n(8)
	switch {
	case mode >= 4:
		g.digest()
	case !ok:
		g.emit(asm.Mov.Imm(asm.R0, g.imm()))
	case mode == 0:
		g.emit(asm.Mov.Reg(asm.R0, x))
	case mode == 1:
		g.emit(asm.Mov.Reg32(asm.R0, x))
	case mode == 2 && x != asm.R0:
		g.emit(asm.Mov.Reg(asm.R0, x))
		g.emit(asm.RSh.Imm(asm.R0, 32))
		g.emit(asm.Xor.Reg(asm.R0, x))
	default:
		g.emit(asm.Mov.Reg(asm.R0, x))
		g.emit(asm.And.Imm(asm.R0, 3))
	}
	g.emit(asm.Return())
}

// digest folds every number in R0-R9 and every written 8-byte stack
// slot into R0 (r0 = r0 * K + x), then the high half into the low one.
func (g *gen) digest() {
	const k = -0x61c88647 // odd: the multiplication loses nothing
	if g.st.r[0].k != kScalar {
		g.emit(asm.Mov.Imm(asm.R0, g.imm()))
	}
	for r := asm.R1; r <= asm.R9; r++ {
		if g.st.r[r].k == kScalar {
			g.emit(asm.Mul.Imm(asm.R0, k))
			g.emit(asm.Add.Reg(asm.R0, r))
		}
	}
	for at := 0; at < stackWin; at += 8 {
		if g.written(at, 8) {
			g.emit(asm.LoadMem(asm.R1, asm.R10, int16(at-stackWin), asm.DWord))
			g.emit(asm.Mul.Imm(asm.R0, k))
			g.emit(asm.Add.Reg(asm.R0, asm.R1))
		}
	}
	g.emit(asm.Mov.Reg(asm.R1, asm.R0))
	g.emit(asm.RSh.Imm(asm.R1, 32))
	g.emit(asm.Xor.Reg(asm.R0, asm.R1))
}
