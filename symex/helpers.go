package symex

import (
	"fmt"
	"maps"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/dpperf/dpperf/bpfprog"
)

// Kernel constants the helper models use.
const (
	einval       = 22
	ethHlen      = 14
	xdpHeadroom  = 256 // XDP_PACKET_HEADROOM
	xdpFrameSize = 40  // sizeof(struct xdp_frame), kept at the buffer's start
	xdpTailroom  = 320 // SKB_DATA_ALIGN(sizeof(struct skb_shared_info))
	pageSize     = 4096
	xdpRedirect  = 4
	// maxMeta is the most metadata bpf_xdp_adjust_meta grants: 32 bytes
	// on older kernels, 255 on recent ones; the larger keeps the model an
	// over-approximation on both.
	maxMeta = 255
)

// helper executes a helper call: R0 gets the result, R1-R5 are clobbered.
func (m *machine) helper(fn asm.BuiltinFunc) error {
	st, b := m.st, m.b
	r := func(i asm.Register) value { return st.regs[i] }
	var res value
	switch fn {
	case asm.FnMapLookupElem:
		v, err := m.lookup(r(asm.R1), r(asm.R2))
		if err != nil {
			return err
		}
		m.noteLookup(v)
		res = v
	case asm.FnMapUpdateElem, asm.FnMapDeleteElem:
		m.notePresence(r(asm.R1), r(asm.R2))
		m.forget(r(asm.R1))
		res = m.status("e")
		m.describe("call", res.off, fn, r(asm.R1))
	case asm.FnKtimeGetNs, asm.FnKtimeGetBootNs, asm.FnKtimeGetCoarseNs, asm.FnJiffies64, asm.FnKtimeGetTaiNs:
		res = scalar(b.fresh(64, "time"))
	case asm.FnGetPrandomU32, asm.FnGetSmpProcessorId, asm.FnGetNumaNodeId:
		res = scalar(b.zext(b.fresh(32, "rnd"), 64))
	case asm.FnTracePrintk, asm.FnPerfEventOutput, asm.FnRingbufOutput:
		res = m.status("o")
	case asm.FnTailCall:
		m.note("tail calls: the path continues as if the call failed; the called program is not analysed")
		res = scalar(b.zext(b.fresh(32, "tc"), 64))
	case asm.FnRedirect:
		// XDP_REDIRECT, or XDP_ABORTED for flags the helper rejects.
		ok := b.eq(r(asm.R2).off, konst(64, 0))
		res = scalar(b.ite(ok, konst(64, xdpRedirect), konst(64, 0)))
	case asm.FnRedirectMap:
		// XDP_REDIRECT when the entry exists, else the low two bits of flags.
		found := m.redirectFound(r(asm.R1), r(asm.R2))
		fallback := b.bvAnd(r(asm.R3).off, konst(64, 3))
		res = scalar(b.ite(found, konst(64, xdpRedirect), fallback))
	case asm.FnXdpAdjustHead:
		res = m.adjustHead(r(asm.R2).off)
	case asm.FnXdpAdjustTail:
		res = m.adjustTail(r(asm.R2).off)
	case asm.FnXdpAdjustMeta:
		res = m.adjustMeta(r(asm.R2).off)
	case asm.FnCsumDiff:
		m.note("helper csum_diff: result unconstrained")
		res = scalar(b.fresh(64, "csum"))
	default:
		name := fn.String()
		m.note("helper %s is not modelled: its result and the memory its pointer arguments reach are unconstrained", name)
		for a := asm.R1; a <= asm.R5; a++ {
			if v := r(a); v.isPtr() && v.reg != regCtx && v.reg != regMap {
				m.havoc(v)
			}
		}
		res = scalar(b.fresh(64, "r"))
	}
	if !res.isPtr() && !res.off.known && fn != asm.FnMapUpdateElem && fn != asm.FnMapDeleteElem {
		m.describe("call", res.off, fn, r(asm.R1))
	}
	for a := asm.R1; a <= asm.R5; a++ {
		st.regs[a] = scalar(konst(64, 0))
	}
	st.regs[asm.R0] = res
	return nil
}

// describe writes a comment that tells readers of the SMT text what a name
// stands for: "; @call NAME HELPER [MAP]" for a helper's result, and
// "; @lookup FOUND MAP KEY VALUE" for a map lookup (the Bool that it found
// an element, the key term and the value's byte array).
func (m *machine) describe(kind string, t term, fn asm.BuiltinFunc, mp value) {
	line := "; @" + kind + " " + t.s + " " + fn.String()
	if mp.reg == regMap && mp.obj >= 0 && mp.obj < len(m.g.Maps) && m.g.Maps[mp.obj] != nil {
		line += " " + m.g.Maps[mp.obj].Name
	}
	m.b.emit(line)
}

// status is a helper result that is 0 on success or a negative errno.
func (m *machine) status(prefix string) value {
	b := m.b
	v := b.fresh(64, prefix)
	ok := b.eq(v, konst(64, 0))
	errno := b.and(b.cmpBool(asm.JSLT, v, konst(64, 0)), b.cmpBool(asm.JSGE, v, neg(4095)))
	m.assert(b.def(1, "or", ok, errno))
	return scalar(v)
}

// lookup models bpf_map_lookup_elem: NULL, or a pointer to a value the
// program may find holding anything. An array finds every index below
// max_entries. A second lookup of the same key in the same map, with no
// update in between, meets the same element.
func (m *machine) lookup(mp, keyPtr value) (value, error) {
	st, b := m.st, m.b
	if mp.reg != regMap {
		return value{}, m.invalid("map lookup on a %s, not a map", mp.reg)
	}
	if mp.obj < 0 || m.g.Maps[mp.obj] == nil {
		m.note("lookup in an inner map: value unconstrained")
		return m.newObject(-1, 64, term{}, b.fresh(1, "found")), nil
	}
	spec := m.g.Maps[mp.obj]
	key, err := m.readMem(keyPtr, int(spec.KeySize))
	if err != nil {
		return value{}, err
	}
	cacheKey := key.s + "@" + spec.Name
	if o, ok := st.lookups[cacheKey]; ok {
		v := pointer(regObj, o, konst(64, 0))
		null := b.not(st.objs[o].found)
		v.null = &null
		return v, nil
	}
	if spec.Type == ebpf.ArrayOfMaps || spec.Type == ebpf.HashOfMaps {
		m.note("map of maps %s: inner maps are unconstrained", spec.Name)
		v := pointer(regMap, -1, konst(64, 0))
		null := b.not(b.fresh(1, "found"))
		v.null = &null
		return v, nil
	}
	// The map's contents since its last update are two functions of the
	// key, whether an element is there and its value: lookups of equal
	// keys meet the same element, whatever the keys' terms.
	found := m.inMap(mp.obj, key)
	_, val := m.contents(mp.obj)
	v := m.newObjectIn(mp.obj, int(spec.ValueSize), key, found, "("+val+" "+key.s+")")
	st.lookups[cacheKey] = v.obj
	return v, nil
}

// redirectFound is whether bpf_redirect_map finds its entry: the map's
// element at the key's low 32 bits, as a lookup of the same key finds it
// (a program that looks the socket up first, then redirects to it, takes
// both on the same element). Maps the contents do not model: unknown.
func (m *machine) redirectFound(mp, key value) term {
	if mp.reg != regMap || mp.obj < 0 || m.g.Maps[mp.obj] == nil || m.g.Maps[mp.obj].KeySize != 4 {
		return m.b.fresh(1, "rm")
	}
	has, _ := m.contents(mp.obj)
	k := m.b.extract(key.off, 31, 0)
	return m.b.defRaw(1, "("+has+" "+k.s+")")
}

// contents names the functions that give a map's elements in its current
// version (see state.versions), declaring them on first use.
func (m *machine) contents(mapIdx int) (has, val string) {
	ver := m.st.versions[mapIdx]
	has, val = contentNames(mapIdx, ver)
	if ver > 0 && !m.st.declared[has] {
		m.st.declared = maps.Clone(m.st.declared)
		if m.st.declared == nil {
			m.st.declared = map[string]bool{}
		}
		m.st.declared[has] = true
		for _, d := range declareContents(m.g.Maps[mapIdx], has, val) {
			m.b.emit(d)
		}
	}
	return has, val
}

// contentNames names a map version's functions: is an element there, and
// its value.
func contentNames(mapIdx, ver int) (has, val string) {
	return fmt.Sprintf("has%d_%d", mapIdx, ver), fmt.Sprintf("val%d_%d", mapIdx, ver)
}

func declareContents(spec *bpfprog.Map, has, val string) []string {
	k := sortOf(uint16(8 * spec.KeySize))
	return []string{"(declare-fun " + has + " (" + k + ") Bool)", "(declare-fun " + val + " (" + k + ") " + arraySort + ")"}
}

func (m *machine) newObject(mapIdx, size int, key, found term) value {
	return m.newObjectIn(mapIdx, size, key, found, "")
}

// newObjectIn makes the memory object of a lookup's result, its initial
// contents the array term init, or unconstrained when init is empty.
func (m *machine) newObjectIn(mapIdx, size int, key, found term, init string) value {
	arr := m.b.name("v")
	if init == "" {
		m.b.emit("(declare-const " + arr + " " + arraySort + ")")
	} else {
		m.b.emit("(define-fun " + arr + " () " + arraySort + " " + init + ")")
	}
	if mapIdx >= 0 && key.w > 0 {
		m.b.emit("; @lookup " + found.s + " " + m.g.Maps[mapIdx].Name + " " + key.s + " " + arr)
	}
	m.st.objs = append(m.st.objs, object{mapIdx: mapIdx, size: size, init: arr, arr: arr, key: key, found: found})
	v := pointer(regObj, len(m.st.objs)-1, konst(64, 0))
	null := m.b.not(found)
	v.null = &null
	return v
}

// forget drops what the path knows of a map's elements after an update or
// delete: later lookups meet new elements, and values already looked up
// may have changed (arrays update in place).
func (m *machine) forget(mp value) {
	st := m.st
	if mp.reg != regMap {
		return
	}
	for k, o := range st.lookups {
		if st.objs[o].mapIdx == mp.obj || mp.obj < 0 {
			delete(st.lookups, k)
		}
	}
	st.versions = maps.Clone(st.versions)
	if st.versions == nil {
		st.versions = map[int]int{}
	}
	for i := range m.g.Maps {
		if i == mp.obj || mp.obj < 0 {
			st.versions[i]++
		}
	}
	for i := range st.objs {
		if o := &st.objs[i]; !o.global && (o.mapIdx == mp.obj || mp.obj < 0) {
			m.havoc(pointer(regObj, i, konst(64, 0)))
		}
	}
}

// adjustHead models bpf_xdp_adjust_head: data moves by delta unless it
// would leave the headroom (after the xdp_frame and the metadata) or leave
// less than an Ethernet header.
func (m *machine) adjustHead(delta term) value {
	st, b := m.st, m.b
	d := b.sextTo(b.extract(delta, 31, 0), 64)
	head, _ := b.alu(asm.Add, false, st.pkt.head, d)
	metalen, _ := b.alu(asm.Sub, false, st.pkt.head, st.pkt.meta)
	lowest, _ := b.alu(asm.Add, false, metalen, neg(xdpHeadroom-xdpFrameSize))
	highest, _ := b.alu(asm.Sub, false, st.pkt.end, konst(64, ethHlen))
	ok := b.and(b.cmpBool(asm.JSGE, head, lowest), b.cmpBool(asm.JSLE, head, highest))
	st.pkt.head = b.ite(ok, head, st.pkt.head)
	meta, _ := b.alu(asm.Sub, false, head, metalen)
	st.pkt.meta = b.ite(ok, meta, st.pkt.meta)
	return scalar(b.ite(ok, konst(64, 0), neg(einval)))
}

// adjustTail models bpf_xdp_adjust_tail for a one-page frame: data_end
// moves by delta unless the frame would end in the tailroom or hold less
// than an Ethernet header.
func (m *machine) adjustTail(delta term) value {
	st, b := m.st, m.b
	d := b.sextTo(b.extract(delta, 31, 0), 64)
	end, _ := b.alu(asm.Add, false, st.pkt.end, d)
	size, _ := b.alu(asm.Sub, false, end, st.pkt.head)
	limit := konst(64, uint64(pageSize-xdpHeadroom-xdpTailroom))
	ok := b.and(b.cmpBool(asm.JSLE, end, limit), b.cmpBool(asm.JSGE, size, konst(64, ethHlen)))
	st.pkt.end = b.ite(ok, end, st.pkt.end)
	return scalar(b.ite(ok, konst(64, 0), neg(einval)))
}

// adjustMeta models bpf_xdp_adjust_meta: metadata of at most 32 bytes, a
// multiple of 4, between the xdp_frame and data.
func (m *machine) adjustMeta(delta term) value {
	st, b := m.st, m.b
	d := b.sextTo(b.extract(delta, 31, 0), 64)
	meta, _ := b.alu(asm.Add, false, st.pkt.meta, d)
	metalen, _ := b.alu(asm.Sub, false, st.pkt.head, meta)
	ok := b.and(
		b.cmpBool(asm.JSGE, meta, neg(xdpHeadroom-xdpFrameSize)),
		b.cmpBool(asm.JSGE, metalen, konst(64, 0)),
		b.cmpBool(asm.JSLE, metalen, konst(64, maxMeta)),
		b.eq(b.bvAnd(metalen, konst(64, 3)), konst(64, 0)))
	st.pkt.meta = b.ite(ok, meta, st.pkt.meta)
	return scalar(b.ite(ok, konst(64, 0), neg(einval)))
}

// atomic executes an atomic read-modify-write of size bytes.
func (m *machine) atomic(ins asm.Instruction, size int) error {
	st, b := m.st, m.b
	p := st.regs[ins.Dst]
	old, err := m.load(p, int64(ins.Offset), size)
	if err != nil {
		return err
	}
	w := uint16(8 * size)
	o := b.extract(old.off, w-1, 0)
	src := b.extract(st.regs[ins.Src].off, w-1, 0)
	aop := ins.OpCode.AtomicOp()
	var nv term
	switch aop {
	case asm.AddAtomic, asm.FetchAdd:
		nv, _ = b.alu(asm.Add, false, o, src)
	case asm.OrAtomic, asm.FetchOr:
		nv, _ = b.alu(asm.Or, false, o, src)
	case asm.AndAtomic, asm.FetchAnd:
		nv, _ = b.alu(asm.And, false, o, src)
	case asm.XorAtomic, asm.FetchXor:
		nv, _ = b.alu(asm.Xor, false, o, src)
	case asm.Xchg:
		nv = src
	case asm.CmpXchg:
		expect := b.extract(st.regs[asm.R0].off, w-1, 0)
		nv = b.ite(b.eq(o, expect), src, o)
		st.regs[asm.R0] = scalar(b.zext(o, 64))
	default:
		return unsupported("atomic operation %v", aop)
	}
	if err := m.store(p, int64(ins.Offset), size, scalar(b.zext(nv, 64))); err != nil {
		return err
	}
	switch aop {
	case asm.FetchAdd, asm.FetchOr, asm.FetchAnd, asm.FetchXor, asm.Xchg:
		st.regs[ins.Src] = scalar(b.zext(o, 64))
	}
	return nil
}

// neg is the 64-bit constant -n.
func neg(n int64) term { return konst(64, uint64(-n)) }

// cmpBool is a comparison that cannot fail (the operation is known).
func (b builder) cmpBool(op asm.JumpOp, x, y term) term {
	c, _ := b.cmp(op, x, y)
	return c
}
