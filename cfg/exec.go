package cfg

import (
	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
)

// members lists the members of region r (blocks directly in r, and child
// loops by their header block) reachable from entry, in topological order
// of the region's forward edges.
func (x *expander) members(f *Func, r *Loop, entry int) []int {
	key := func(b int) int {
		if l := f.childOf(r, b); l != nil {
			return l.Header
		}
		return b
	}
	succ := map[int][]int{}
	for b := range f.Blocks {
		if !inRegion(r, b) {
			continue
		}
		from := key(b)
		for _, s := range f.Blocks[b].succs() {
			if !inRegion(r, s) || (r != nil && s == r.Header) {
				continue
			}
			if to := key(s); to != from {
				succ[from] = append(succ[from], to)
			}
		}
	}
	var order []int
	seen := map[int]bool{}
	var visit func(int)
	visit = func(m int) {
		seen[m] = true
		for _, s := range succ[m] {
			if !seen[s] {
				visit(s)
			}
		}
		order = append(order, m)
	}
	visit(key(entry))
	for i, j := 0, len(order)-1; i < j; i, j = i+1, j-1 {
		order[i], order[j] = order[j], order[i]
	}
	return order
}

// mapIndex returns the index in Graph.Maps of the named map.
func (x *expander) mapIndex(name string) int16 {
	if id, ok := x.mapID[name]; ok {
		return id
	}
	id := int16(len(x.g.Maps))
	x.mapID[name] = id
	x.g.Maps = append(x.g.Maps, x.p.Maps[name])
	return id
}

// exec runs block b abstractly from st (updated in place) and records the
// memory accesses and helper calls of node id.
func (x *expander) exec(id NodeID, b *Block, st *state) {
	var ops []Op
	access := func(i int, k OpKind, p value) {
		op := Op{Insn: int32(i), Kind: k, Region: RegionNone, Map: -1}
		if p.kind == pointer {
			op.Region = p.region
			if p.region == RegionMapValue {
				op.Map = int16(p.base)
			}
		}
		ops = append(ops, op)
	}
	for i := b.First; i <= b.Last; i++ {
		ins := x.p.Insns[i]
		op := ins.OpCode
		switch cls := op.Class(); {
		case cls.IsALU():
			is32 := cls == asm.ALUClass
			src := constant(ins.Constant)
			if op.Source() == asm.RegSource {
				src = st.regs[ins.Src]
			}
			switch {
			case op.ALUOp() == asm.Swap, op.ALUOp() == asm.Mov && ins.Offset != 0,
				(op.ALUOp() == asm.Div || op.ALUOp() == asm.Mod) && ins.Offset != 0:
				st.regs[ins.Dst] = top // byte swaps, sign-extending moves, signed division
			default:
				st.regs[ins.Dst] = alu(op.ALUOp(), is32, st.regs[ins.Dst], src)
			}
		case cls == asm.LdClass && op.Mode() == asm.ImmMode:
			switch {
			case ins.IsLoadFromMap() && ins.Src == asm.PseudoMapValue:
				st.regs[ins.Dst] = ptr(RegionMapValue, int32(x.mapIndex(ins.Reference())), int64(uint64(ins.Constant)>>32))
			case ins.IsLoadFromMap():
				st.regs[ins.Dst] = ptr(RegionMapPtr, int32(x.mapIndex(ins.Reference())), 0)
			case ins.Src == 0:
				st.regs[ins.Dst] = constant(ins.Constant)
			default:
				st.regs[ins.Dst] = top
			}
		case cls == asm.LdClass: // LD_ABS / LD_IND: packet loads into r0
			ops = append(ops, Op{Insn: int32(i), Kind: OpLoad, Region: RegionPacket, Map: -1})
			for r := asm.R0; r <= asm.R5; r++ {
				st.regs[r] = top
			}
		case cls == asm.LdXClass:
			base := st.regs[ins.Src]
			access(i, OpLoad, base)
			size := int(op.Size().Sizeof())
			v := top
			switch {
			case op.Mode() == asm.MemSXMode:
			case base.kind == pointer && base.region == RegionCtx && base.exact:
				v = ctxLoad(x.p.Type, base.off+int64(ins.Offset))
			default:
				v = st.load(base, int64(ins.Offset), size)
			}
			if v == top && size < 8 && op.Mode() == asm.MemMode {
				v = value{kind: between, hi: int64(uint64(1)<<(8*size) - 1)} // zero-extended
			}
			st.regs[ins.Dst] = v
		case cls == asm.StClass || cls == asm.StXClass:
			base := st.regs[ins.Dst]
			size := int(op.Size().Sizeof())
			if op.Mode() == asm.AtomicMode {
				access(i, OpAtomic, base)
				st.store(base, int64(ins.Offset), size, top)
				switch op.AtomicOp() {
				case asm.FetchAdd, asm.FetchAnd, asm.FetchOr, asm.FetchXor, asm.Xchg:
					st.regs[ins.Src] = top
				case asm.CmpXchg:
					st.regs[asm.R0] = top
				}
				continue
			}
			access(i, OpStore, base)
			v := constant(ins.Constant)
			if cls == asm.StXClass {
				v = st.regs[ins.Src]
			}
			st.store(base, int64(ins.Offset), size, v)
		case op.JumpOp() == asm.Call && ins.IsBuiltinCall():
			fn := asm.BuiltinFunc(ins.Constant)
			hop := Op{Insn: int32(i), Kind: OpHelper, Map: -1, Helper: fn}
			if m := st.regs[asm.R1]; m.kind == pointer && m.region == RegionMapPtr {
				hop.Map = int16(m.base)
			}
			ops = append(ops, hop)
			if resizing[fn] {
				st.adjusted = true
			}
			res := top
			if fn == asm.FnMapLookupElem && hop.Map >= 0 {
				res = ptr(RegionMapValue, int32(hop.Map), 0)
				res.maybeNull = !x.arrayHit(hop.Map, st)
			}
			if !readOnlyHelpers[fn] {
				for r := asm.R1; r <= asm.R5; r++ {
					if v := st.regs[r]; v.kind == pointer && v.region == RegionStack {
						st.clearFrame(v.base)
					}
				}
			}
			for r := asm.R1; r <= asm.R5; r++ {
				st.regs[r] = top
			}
			st.regs[asm.R0] = res
		}
	}
	x.g.Nodes[id].Ops = ops
}

// arrayHit reports whether a lookup in map m, with the key r2 points to,
// finds an element on every path into it: m is an array and the key below
// its size on every path (array lookups fail for no other reason).
func (x *expander) arrayHit(m int16, st *state) bool {
	spec := x.g.Maps[m]
	if spec == nil || (spec.Type != ebpf.Array && spec.Type != ebpf.PerCPUArray) || spec.KeySize != 4 {
		return false
	}
	_, hi, ok := st.load(st.regs[asm.R2], 0, 4).bounds()
	return ok && hi < uint64(spec.MaxEntries)
}
