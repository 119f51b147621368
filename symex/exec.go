package symex

import (
	"fmt"

	"github.com/cilium/ebpf/asm"

	"github.com/dpperf/dpperf/bpfprog"
	"github.com/dpperf/dpperf/cfg"
)

// machine executes instructions on a state, writing SMT commands through
// its builder.
type machine struct {
	g        *cfg.Graph
	p        *bpfprog.Program
	b        builder
	st       *state
	dead     bool // a condition folded to false: the prefix is infeasible
	asserted bool // a condition was added
	nAsserts int  // conditions added
	notes    map[string]bool
	cur      int // the instruction being executed
}

func (m *machine) note(format string, args ...any) { m.notes[fmt.Sprintf(format, args...)] = true }

// assert adds a condition of the path.
func (m *machine) assert(c term) {
	c = m.b.resolve(c)
	if c.known {
		if c.c == 0 {
			m.dead = true
		}
		return
	}
	if c.test != nil {
		m.st.lens = c.test.narrow(m.st.lens)
	}
	if c.notOf != "" {
		m.st.decided.set(c.notOf, false)
	} else {
		m.st.decided.set(c.s, true)
	}
	if e := c.eqOf; e != nil && !e.neg {
		m.st.eqs.set(e.name, e.c)
	}
	m.asserted = true
	m.nAsserts++
	m.b.emit("(assert " + c.s + ")")
}

// at names the instruction being executed by its source location, or
// its index.
func (m *machine) at() string {
	if loc, _ := m.p.Line(m.cur); loc != "" {
		return loc
	}
	return fmt.Sprintf("insn%d", m.cur)
}

func (m *machine) where(i int) string {
	if loc, _ := m.p.Line(i); loc != "" {
		return fmt.Sprintf("insn %d (%s)", i, loc)
	}
	return fmt.Sprintf("insn %d", i)
}

// body executes the instructions of node n, leaving its terminator (jump,
// call, exit) to the edge that leaves it.
func (m *machine) body(n cfg.NodeID) error {
	blk := m.g.Block(n)
	if blk == nil {
		return nil
	}
	last := blk.Last
	if blk.Term != cfg.TermFall {
		last--
	}
	for i := blk.First; i <= last; i++ {
		if err := m.insn(i); err != nil {
			if _, ok := bpfprog.IsInvalid(err); ok {
				return err
			}
			return fmt.Errorf("%s: %w", m.where(i), err)
		}
	}
	return nil
}

func (m *machine) insn(i int) error {
	m.cur = i
	ins := m.p.Insns[i]
	op := ins.OpCode
	st := m.st
	switch cls := op.Class(); {
	case cls.IsALU():
		return m.aluInsn(ins)
	case cls == asm.LdClass && op.Mode() == asm.ImmMode:
		switch {
		case ins.IsLoadFromMap() && ins.Src == asm.PseudoMapValue:
			obj := m.global(ins.Reference())
			st.regs[ins.Dst] = pointer(regObj, obj, konst(64, uint64(ins.Constant)>>32))
		case ins.IsLoadFromMap():
			st.regs[ins.Dst] = pointer(regMap, m.mapIndex(ins.Reference()), konst(64, 0))
		case ins.Src == 0:
			st.regs[ins.Dst] = scalar(konst(64, uint64(ins.Constant)))
		default:
			return unsupported("64-bit immediate load of kind %d", ins.Src)
		}
	case cls == asm.LdClass:
		return unsupported("legacy packet load (LD_ABS/LD_IND)")
	case cls == asm.LdXClass:
		size := int(op.Size().Sizeof())
		v, err := m.load(st.regs[ins.Src], int64(ins.Offset), size)
		if err != nil {
			return err
		}
		if op.Mode() == asm.MemSXMode && !v.isPtr() {
			v = scalar(m.b.sextTo(m.b.extract(v.off, uint16(8*size-1), 0), 64))
		}
		st.regs[ins.Dst] = v
	case cls == asm.StClass || cls == asm.StXClass:
		size := int(op.Size().Sizeof())
		if op.Mode() == asm.AtomicMode {
			return m.atomic(ins, size)
		}
		v := scalar(konst(64, uint64(ins.Constant)))
		if cls == asm.StXClass {
			v = st.regs[ins.Src]
		}
		return m.store(st.regs[ins.Dst], int64(ins.Offset), size, v)
	case op.JumpOp() == asm.Call && ins.IsBuiltinCall():
		return m.helper(asm.BuiltinFunc(ins.Constant))
	case cls.IsJump():
		return unsupported("jump %v inside a block", op)
	default:
		return unsupported("instruction %v", ins)
	}
	return nil
}

// mapIndex returns the index in Graph.Maps of a map, adding it when the
// graph did not list it.
func (m *machine) mapIndex(name string) int {
	for i, mp := range m.g.Maps {
		if mp != nil && mp.Name == name {
			return i
		}
	}
	return -1
}

// global returns the object holding a global data map (.data, .bss,
// .rodata): symbolic, since the loader may set it.
func (m *machine) global(name string) int {
	idx := m.mapIndex(name)
	for i, o := range m.st.objs {
		if o.global && o.mapIdx == idx {
			return i
		}
	}
	size := 0
	if idx >= 0 {
		size = int(m.g.Maps[idx].ValueSize)
	}
	arr := m.b.name("g")
	m.b.emit("(declare-const " + arr + " " + arraySort + ")")
	m.st.objs = append(m.st.objs, object{mapIdx: idx, size: size, init: arr, arr: arr, global: true, found: boolConst(true)})
	return len(m.st.objs) - 1
}

func (m *machine) aluInsn(ins asm.Instruction) error {
	st, b := m.st, m.b
	op := ins.OpCode
	is32 := op.Class() == asm.ALUClass
	alu := op.ALUOp()
	dst := st.regs[ins.Dst]
	src := scalar(konst(64, uint64(ins.Constant)))
	if op.Source() == asm.RegSource && alu != asm.Swap && alu != asm.Neg {
		src = st.regs[ins.Src]
	}
	if alu == asm.Swap {
		n := int(ins.Constant) / 8
		switch {
		case !is32 || op.Endianness() == asm.BE: // bswap, or to big endian on a little-endian machine
			st.regs[ins.Dst] = scalar(b.bswap(dst.off, n))
		default: // to little endian: truncate
			st.regs[ins.Dst] = scalar(b.zext(b.extract(dst.off, uint16(8*n-1), 0), 64))
		}
		return nil
	}
	// A move of a number overwrites a pointer: plain arithmetic.
	if src.isPtr() || (dst.isPtr() && alu != asm.Mov) {
		return m.ptrALU(ins, alu, is32, dst, src)
	}
	if alu == asm.Mov && ins.Offset != 0 { // sign-extending move
		v := b.sextTo(b.extract(src.off, uint16(ins.Offset-1), 0), 64)
		if is32 {
			v = b.zext(b.extract(v, 31, 0), 64)
		}
		st.regs[ins.Dst] = scalar(v)
		return nil
	}
	signed := (alu == asm.Div || alu == asm.Mod) && ins.Offset == 1
	x, y := dst.off, src.off
	if is32 {
		x, y = b.extract(x, 31, 0), b.extract(y, 31, 0)
	}
	r, err := b.alu(alu, signed, x, y)
	if err != nil {
		return unsupported("%v", err)
	}
	st.regs[ins.Dst] = scalar(b.zext(r, 64))
	return nil
}

// ptrALU handles arithmetic where an operand is a pointer: the region
// stays, only the offset moves.
func (m *machine) ptrALU(ins asm.Instruction, alu asm.ALUOp, is32 bool, dst, src value) error {
	st, b := m.st, m.b
	switch {
	case alu == asm.Mov && !is32:
		st.regs[ins.Dst] = src
	case is32:
		return m.invalid("32-bit arithmetic on a %s pointer", dst.reg)
	case dst.isPtr() && !src.isPtr() && (alu == asm.Add || alu == asm.Sub):
		off, _ := b.alu(alu, false, dst.off, src.off)
		st.regs[ins.Dst] = value{reg: dst.reg, obj: dst.obj, off: off, null: dst.null}
	case !dst.isPtr() && src.isPtr() && alu == asm.Add:
		off, _ := b.alu(asm.Add, false, src.off, dst.off)
		st.regs[ins.Dst] = value{reg: src.reg, obj: src.obj, off: off, null: src.null}
	case dst.isPtr() && src.isPtr() && alu == asm.Sub && dst.reg == src.reg && dst.obj == src.obj:
		off, _ := b.alu(asm.Sub, false, dst.off, src.off)
		st.regs[ins.Dst] = scalar(off)
	default:
		// The verifier allows little else on pointers; the value becomes a
		// number the program can only compare or print.
		m.note("arithmetic %v on a %s pointer: result unconstrained", alu, dst.reg)
		st.regs[ins.Dst] = scalar(b.fresh(64, "u"))
	}
	return nil
}

// cond returns the Bool under which the conditional jump at insn i is
// taken.
func (m *machine) cond(i int) (term, error) {
	ins := m.p.Insns[i]
	op := ins.OpCode
	st, b := m.st, m.b
	x := st.regs[ins.Dst]
	y := scalar(konst(64, uint64(ins.Constant)))
	if op.Source() == asm.RegSource {
		y = st.regs[ins.Src]
	}
	jop := op.JumpOp()
	is32 := op.Class() == asm.Jump32Class
	switch {
	case !x.isPtr() && !y.isPtr():
		a, c := x.off, y.off
		if is32 {
			a, c = b.extract(a, 31, 0), b.extract(c, 31, 0)
		}
		return b.cmp(jop, a, c)
	case x.isPtr() && y.isPtr() && x.reg == y.reg && x.obj == y.obj && !is32:
		// Pointers into one region compare as their offsets, which may be
		// negative (before the received data, after adjust_head).
		return b.cmp(bpfprog.Signed(jop), x.off, y.off)
	case x.isPtr() != y.isPtr() && (jop == asm.JEq || jop == asm.JNE):
		p, n := x, y
		if y.isPtr() {
			p, n = y, x
		}
		if n.off.known && n.off.c == 0 {
			if jop == asm.JEq {
				return p.isNull(), nil
			}
			return b.not(p.isNull()), nil
		}
	}
	m.note("comparison of %s with %s at %s: outcome unconstrained", x.reg, y.reg, m.where(i))
	return b.fresh(1, "c"), nil
}

// enter starts the path: the registers and memory the program receives.
func (m *machine) enter(lenTerm term) {
	st := m.st
	for r := range st.regs {
		st.regs[r] = scalar(konst(64, 0))
	}
	st.regs[asm.R1] = pointer(regCtx, 0, konst(64, 0))
	st.regs[asm.R10] = pointer(regStack, 0, konst(64, 0))
	st.stacks, st.owned = nil, nil
	st.newFrame()
	st.pkt = packet{arr: "pkt0", base: "pkt0", head: konst(64, 0), meta: konst(64, 0), end: lenTerm}
	st.lookups = map[string]int{}
	st.decided = newPmap[string, bool]()
	st.eqs, st.loads = newPmap[string, uint64](), newPmap[string, term]()
}

// edge applies the way control leaves the edge's source node.
func (m *machine) edge(e cfg.Edge) error {
	st := m.st
	switch e.Kind {
	case cfg.EdgeTaken, cfg.EdgeNotTaken:
		_, last := m.g.Insns(e.From)
		m.cur = last
		c, err := m.cond(last)
		if err != nil {
			return fmt.Errorf("%s: %w", m.where(last), err)
		}
		if e.Kind == cfg.EdgeNotTaken {
			c = m.b.not(c)
		}
		m.assert(c)
	case cfg.EdgeCall:
		f := frame{stack: st.frame}
		copy(f.saved[:], st.regs[asm.R6:])
		st.frames = append(st.frames, f)
		st.frame = st.newFrame()
		st.regs[asm.R10] = pointer(regStack, st.frame, konst(64, 0))
	case cfg.EdgeReturn:
		if len(st.frames) == 0 {
			return fmt.Errorf("return without a call")
		}
		f := st.frames[len(st.frames)-1]
		st.frames = st.frames[:len(st.frames)-1]
		copy(st.regs[asm.R6:], f.saved[:])
		st.frame = f.stack
		for r := asm.R1; r <= asm.R5; r++ {
			st.regs[r] = scalar(konst(64, 0))
		}
	case cfg.EdgeExit:
		r0 := st.regs[asm.R0]
		if r0.isPtr() {
			return fmt.Errorf("program returns a %s pointer", r0.reg)
		}
		st.verdict, st.exited = r0.off, true
	}
	return nil
}
