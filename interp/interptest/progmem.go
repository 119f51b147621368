package interptest

import "github.com/cilium/ebpf/asm"

// The memory accesses GenProgram draws from: bounds checks, packet,
// stack and context accesses, atomics on the stack.

// boundsCheck emits "t = p + N; if t > data_end goto out" in one of its
// forms, on the side where it holds proving N bytes after p.
func (g *gen) boundsCheck() {
	p, ok1 := g.pick(func(r reg) bool { return r.k == kPkt })
	e, ok2 := g.pick(func(r reg) bool { return r.k == kEnd })
	if !ok1 || !ok2 || !g.room(4) {
		g.ctxLoad()
		return
	}
	t := g.dst(e)
	n := int16(1 + g.n(64))
	pr := g.st.r[p]
	g.emit(asm.Mov.Reg(t, p))
	g.emit(asm.Add.Imm(t, int32(n)))
	tr := reg{k: kPkt, id: pr.id, off: pr.off + n}
	g.st.r[t] = tr
	safe := g.st
	safe.safe[tr.id] = max(safe.safe[tr.id], tr.off)
	// forms: comparison, operands swapped, and whether taking it is the safe side
	forms := []struct {
		op          asm.JumpOp
		swap, taken bool
	}{{asm.JGT, false, false}, {asm.JLT, true, false}, {asm.JLE, false, true}, {asm.JGE, true, true}, {asm.JGE, false, false}, {asm.JLT, false, true}}
	f := forms[g.n(len(forms))]
	ins := asm.Instruction{OpCode: f.op.Op(asm.RegSource), Dst: t, Src: e}
	if f.swap {
		ins.Dst, ins.Src = e, t
	}
	i := len(g.out)
	if f.taken {
		g.jump(ins, g.target(i), safe)
	} else {
		g.jump(ins, g.target(i), g.st)
		g.st = safe
	}
}

// varPointer emits "v = s & M; q = p + v" (or v + p): a packet pointer
// at a bounded variable offset, a new base that needs a bounds check of
// its own.
func (g *gen) varPointer() {
	s, ok1 := g.pick(isScalar)
	p, ok2 := g.pick(func(r reg) bool { return r.k == kPkt })
	if !ok1 || !ok2 || g.ids+1 >= maxBases || !g.room(4) {
		g.alu()
		return
	}
	v := g.dst(p)
	q := g.dst(v, p)
	masks := []int32{1, 3, 7, 15, 31, 63, 255}
	g.emit(asm.Mov.Reg(v, s))
	if g.bit() {
		g.emit(asm.And.Imm32(v, masks[g.n(len(masks))]))
	} else {
		g.emit(asm.And.Imm(v, masks[g.n(len(masks))]))
	}
	g.st.r[v] = reg{k: kScalar}
	if g.bit() {
		g.emit(asm.Mov.Reg(q, p))
		g.emit(asm.Add.Reg(q, v))
	} else { // the number first: q = v + p
		g.emit(asm.Mov.Reg(q, v))
		g.emit(asm.Add.Reg(q, p))
	}
	g.ids++
	g.st.r[q] = reg{k: kPkt, id: g.ids}
}

// packet emits a load (or a store) of 1, 2, 4 or 8 bytes within a range a
// bounds check proved.
func (g *gen) packet(store bool) {
	size := sizes[g.n(4)]
	sz := int16(size.Sizeof())
	p, ok := g.pick(func(r reg) bool { return r.k == kPkt && g.st.safe[r.id] >= sz })
	if !ok {
		g.alu()
		return
	}
	r := g.st.r[p]
	lo, hi := -r.off, g.st.safe[r.id]-r.off-sz
	off := lo + int16(g.n(int(hi-lo)+1))
	switch {
	case !store && size != asm.DWord && g.bit():
		g.emitTo(g.dst(), kScalar, asm.LoadMemSX(0, p, off, size))
	case !store:
		g.emitTo(g.dst(), kScalar, asm.LoadMem(0, p, off, size))
	default:
		if s, ok := g.pick(isScalar); ok && g.bit() {
			g.emit(asm.StoreMem(p, off, s, size))
		} else {
			g.emit(storeImm(p, off, g.imm(), size))
		}
	}
}

// count is the number of registers ok accepts.
func (g *gen) count(ok func(reg) bool) int {
	n := 0
	for _, r := range g.st.r {
		if ok(r) {
			n++
		}
	}
	return n
}

// fits reports whether some packet pointer has sz bytes proved after its
// base.
func (g *gen) fits(sz int16) bool {
	for _, r := range g.st.r {
		if r.k == kPkt && g.st.safe[r.id] >= sz {
			return true
		}
	}
	return false
}

// storeImm is "*(size *)(dst + off) = imm", for 8 bytes too (the
// immediate sign-extended), which asm.StoreImm does not build.
func storeImm(dst asm.Register, off int16, imm int32, size asm.Size) asm.Instruction {
	return asm.Instruction{OpCode: asm.StoreImmOp(size), Dst: dst, Offset: off, Constant: int64(imm)}
}

// stackStore writes a number, or spills a pointer, to an aligned slot.
func (g *gen) stackStore() {
	size := sizes[g.n(4)]
	sz := size.Sizeof()
	at := sz * g.n(stackWin/sz) // from R10-stackWin
	off := int16(at - stackWin)
	if ptr, ok := g.pick(func(r reg) bool { return r.k >= kCtx }); ok && size == asm.DWord && g.bit() {
		g.emit(asm.StoreMem(asm.R10, off, ptr, size))
		g.st.spill[at/8] = g.st.r[ptr]
		for i := at; i < at+8; i++ {
			g.st.init[i] = false
		}
		return
	}
	if s, ok := g.pick(isScalar); ok && g.bit() {
		g.emit(asm.StoreMem(asm.R10, off, s, size))
	} else {
		g.emit(storeImm(asm.R10, off, g.imm(), size))
	}
	g.st.spill[at/8] = reg{}
	for i := at; i < at+sz; i++ {
		g.st.init[i] = true
	}
}

// stackLoad reads written bytes back, or fills a spilled pointer.
func (g *gen) stackLoad() {
	type slot struct {
		at   int
		size asm.Size
	}
	var cands []slot
	for _, size := range sizes {
		sz := size.Sizeof()
		for at := 0; at < stackWin; at += sz {
			if g.written(at, sz) {
				cands = append(cands, slot{at, size})
			}
		}
	}
	for i, sp := range g.st.spill {
		if sp.k != kNone {
			cands = append(cands, slot{8 * i, 0xff})
		}
	}
	if len(cands) == 0 {
		g.stackStore()
		return
	}
	s := cands[g.n(len(cands))]
	off := int16(s.at - stackWin)
	d := g.dst()
	switch {
	case s.size == 0xff:
		g.emit(asm.LoadMem(d, asm.R10, off, asm.DWord))
		g.st.r[d] = g.st.spill[s.at/8]
	case s.size != asm.DWord && g.bit():
		g.emitTo(d, kScalar, asm.LoadMemSX(0, asm.R10, off, s.size))
	default:
		g.emitTo(d, kScalar, asm.LoadMem(0, asm.R10, off, s.size))
	}
}

var atomicOps = []asm.AtomicOp{asm.AddAtomic, asm.FetchAdd, asm.OrAtomic, asm.FetchOr, asm.AndAtomic, asm.FetchAnd,
	asm.XorAtomic, asm.FetchXor, asm.Xchg, asm.CmpXchg}

// atomic emits an atomic operation on 4 or 8 written bytes of the stack.
func (g *gen) atomic() {
	size := sizes[2+g.n(2)]
	sz := size.Sizeof()
	var slots []int
	for at := 0; at < stackWin; at += sz {
		if g.written(at, sz) {
			slots = append(slots, at)
		}
	}
	s, ok := g.pick(isScalar)
	op := atomicOps[g.n(len(atomicOps))]
	if !ok || len(slots) == 0 || (op == asm.CmpXchg && g.st.r[0].k != kScalar) {
		g.stackStore()
		return
	}
	at := slots[g.n(len(slots))]
	g.emit(op.Mem(asm.R10, s, size, int16(at-stackWin)))
}

// written reports whether the stack bytes [at, at+sz) hold numbers.
func (g *gen) written(at, sz int) bool {
	for i := at; i < at+sz; i++ {
		if !g.st.init[i] {
			return false
		}
	}
	return true
}

// ctxLoad reads a field of xdp_md: data, data_end, ingress_ifindex,
// rx_queue_index or egress_ifindex.
func (g *gen) ctxLoad() {
	c, ok := g.pick(func(r reg) bool { return r.k == kCtx })
	if !ok {
		g.alu()
		return
	}
	fields := []struct {
		off int16
		r   reg
	}{{0, reg{k: kPkt}}, {4, reg{k: kEnd}}, {12, reg{k: kScalar}}, {16, reg{k: kScalar}}, {20, reg{k: kScalar}}}
	f := fields[g.n(len(fields))]
	d := g.dst()
	g.emit(asm.LoadMem(d, c, f.off, asm.Word))
	g.st.r[d] = f.r
}

// ptrArith moves a packet pointer by a constant, or takes the difference
// of two packet pointers (data_end - p: what is left of the packet).
func (g *gen) ptrArith() {
	p, ok := g.pick(func(r reg) bool { return r.k == kPkt })
	if !ok {
		g.alu()
		return
	}
	if e, ok := g.pick(func(r reg) bool { return r.k == kEnd }); ok && g.bit() && g.room(2) {
		d := g.dst(p)
		g.emit(asm.Mov.Reg(d, e))
		g.emit(asm.Sub.Reg(d, p))
		g.st.r[d] = reg{k: kScalar}
		return
	}
	n := int16(g.n(80)) - 16
	r := g.st.r[p]
	if g.bit() {
		g.emit(asm.Add.Imm(p, int32(n)))
	} else {
		g.emit(asm.Sub.Imm(p, int32(-n)))
	}
	r.off += n
	g.st.r[p] = r
}
