package symex

import (
	"slices"
	"strings"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
)

// Memory: the context's fields, the packet and map values as symbolic byte
// arrays, and the stack frames byte by byte.

const arraySort = "(Array (_ BitVec 32) (_ BitVec 8))"

// ctxLoad reads a field of the program context.
func (m *machine) ctxLoad(off int64, size int) (value, error) {
	st, b := m.st, m.b
	switch m.p.Type {
	case ebpf.XDP:
		switch off {
		case 0:
			return pointer(regPacket, 0, st.pkt.head), nil
		case 4:
			return pointer(regPacket, 0, st.pkt.end), nil
		case 8:
			return pointer(regPacket, 0, st.pkt.meta), nil
		case 12:
			return scalar(b.zext(term{w: 32, s: "ifindex"}, 64)), nil
		case 16:
			return scalar(b.zext(term{w: 32, s: "rxq"}, 64)), nil
		case 20:
			return scalar(konst(64, 0)), nil // egress_ifindex: only set for devmap programs
		}
	case ebpf.SchedCLS, ebpf.SchedACT:
		switch off {
		case 76:
			return pointer(regPacket, 0, st.pkt.head), nil
		case 80:
			return pointer(regPacket, 0, st.pkt.end), nil
		case 140:
			return pointer(regPacket, 0, st.pkt.meta), nil
		case 0:
			l, _ := b.alu(asm.Sub, false, st.pkt.end, st.pkt.head)
			return scalar(b.zext(b.extract(l, 31, 0), 64)), nil
		}
	}
	m.note("context field at offset %d of %s programs: value unconstrained", off, m.p.Type)
	return scalar(b.zext(b.fresh(uint16(8*size), "x"), 64)), nil
}

// loadBytes reads n bytes of an array at a 64-bit offset, little endian.
func (m *machine) loadBytes(arr string, off term, n int) term {
	parts := make([]string, n)
	for i := 0; i < n; i++ {
		parts[n-1-i] = "(select " + arr + " " + m.index(off, i).s + ")"
	}
	return m.loaded(parts)
}

// loadPacket reads n bytes of the packet at a 64-bit offset: a byte at a
// constant index is the last byte a store left there, or the packet's
// before those stores (packet.base).
func (m *machine) loadPacket(off term, n int) term {
	pkt := &m.st.pkt
	parts := make([]string, n)
	c, known := uint64(0), true // the value, while every byte is a constant
	for i := 0; i < n; i++ {
		at := m.index(off, i)
		parts[n-1-i] = "(select " + pkt.arr + " " + at.s + ")"
		byteKnown := false
		if at.known {
			parts[n-1-i] = "(select " + pkt.base + " " + at.s + ")"
			for j := len(pkt.wrote) - 1; j >= 0; j-- {
				if v := pkt.wrote[j].v; pkt.wrote[j].at == uint32(at.c) {
					parts[n-1-i] = v.s
					byteKnown = v.known
					c |= v.c << (8 * i)
					break
				}
			}
		}
		known = known && byteKnown
	}
	if known {
		return konst(uint16(8*n), c)
	}
	return m.loaded(parts)
}

// loaded is the term of a load of the bytes parts (most significant
// first), the same term for the same bytes on the path.
func (m *machine) loaded(parts []string) term {
	n := len(parts)
	expr := parts[0]
	if n > 1 {
		expr = "(concat " + strings.Join(parts, " ") + ")"
	}
	if t, ok := m.st.loads.get(expr); ok {
		return t
	}
	t := m.b.defRaw(uint16(8*n), expr)
	m.st.loads.set(expr, t)
	return t
}

// storeBytes writes the low n bytes of v into an array at off and returns
// the new version's name and the bytes written.
func (m *machine) storeBytes(arr string, off term, n int, v term) (string, []term) {
	expr := arr
	bytes := make([]term, n)
	for i := 0; i < n; i++ {
		bytes[i] = m.b.extract(v, uint16(8*i+7), uint16(8*i))
		expr = "(store " + expr + " " + m.index(off, i).s + " " + bytes[i].s + ")"
	}
	name := m.b.name("m")
	m.b.emit("(define-fun " + name + " () " + arraySort + " " + expr + ")")
	return name, bytes
}

// storePacket writes the low n bytes of v into the packet at off.
func (m *machine) storePacket(off term, n int, v term) {
	pkt := &m.st.pkt
	var bytes []term
	pkt.arr, bytes = m.storeBytes(pkt.arr, off, n, v)
	if !off.known {
		pkt.base, pkt.wrote = pkt.arr, nil
		return
	}
	// The slice may be shared with the state this one was cloned from.
	w := slices.Clip(pkt.wrote)
	for i, byt := range bytes {
		w = append(w, stored{at: uint32(off.c + uint64(i)), v: byt})
	}
	pkt.wrote = w
}

// index is the 32-bit array index of off+i.
func (m *machine) index(off term, i int) term {
	a, _ := m.b.alu(asm.Add, false, off, konst(64, uint64(i)))
	return m.b.extract(a, 31, 0)
}

// load reads size bytes at p+off.
func (m *machine) load(p value, off int64, size int) (value, error) {
	st, b := m.st, m.b
	at, _ := b.alu(asm.Add, false, p.off, konst(64, uint64(off)))
	switch p.reg {
	case regCtx:
		if !at.known {
			return value{}, m.invalid("context read at a variable offset")
		}
		return m.ctxLoad(int64(at.c), size)
	case regPacket:
		return scalar(b.zext(m.loadPacket(at, size), 64)), nil
	case regObj:
		return scalar(b.zext(m.loadBytes(st.objs[p.obj].arr, at, size), 64)), nil
	case regStack:
		if err := m.inFrame(at, size); err != nil {
			return value{}, err
		}
		return m.stackLoad(p.obj, at, size), nil
	}
	return value{}, m.invalid("memory read through a %s, not a pointer to memory", p.reg)
}

// store writes the low size bytes of v at p+off.
func (m *machine) store(p value, off int64, size int, v value) error {
	st, b := m.st, m.b
	at, _ := b.alu(asm.Add, false, p.off, konst(64, uint64(off)))
	if v.isPtr() && p.reg != regStack {
		m.note("pointer stored outside the stack: stored as an unconstrained number")
		v = scalar(b.fresh(64, "u"))
	}
	switch p.reg {
	case regCtx:
		m.note("stores to the context are not modelled")
	case regPacket:
		m.storePacket(at, size, v.off)
	case regObj:
		o := &st.objs[p.obj]
		o.arr, _ = m.storeBytes(o.arr, at, size, v.off)
	case regStack:
		if err := m.inFrame(at, size); err != nil {
			return err
		}
		m.stackStore(p.obj, at, size, v)
	default:
		return m.invalid("memory write through a %s, not a pointer to memory", p.reg)
	}
	return nil
}

// inFrame checks that an access of size bytes at a known stack offset
// lies inside the frame, [-512, 0) from the frame pointer, as the
// verifier demands.
func (m *machine) inFrame(at term, size int) error {
	if !at.known {
		return nil
	}
	if off := int64(at.c); off < -stackSize || off+int64(size) > 0 {
		return m.invalid("stack access of %d bytes at offset %d, outside the %d-byte frame", size, off, stackSize)
	}
	return nil
}

func (m *machine) stackLoad(fr int, at term, size int) value {
	b := m.b
	if !at.known {
		m.note("stack read at a variable offset: value unconstrained")
		return scalar(b.zext(b.fresh(uint16(8*size), "u"), 64))
	}
	cells := m.st.stacks[fr]
	base := int64(at.c)
	first, ok := cells[base]
	if ok && first.ptr != nil && first.idx == 0 && size == 8 {
		whole := true
		for i := int64(1); i < 8; i++ {
			if c := cells[base+i]; c.ptr != first.ptr || c.idx != uint16(i) {
				whole = false
			}
		}
		if whole {
			return *first.ptr
		}
	}
	// Bytes in order from one source: a slice of it.
	if ok && first.ptr == nil && int(first.idx)+size <= 8 {
		same := true
		for i := 1; i < size; i++ {
			c, ok := cells[base+int64(i)]
			if !ok || c.ptr != nil || c.src != first.src || c.idx != first.idx+uint16(i) {
				same = false
				break
			}
		}
		if same {
			return scalar(b.zext(b.extract(first.src, 8*(first.idx+uint16(size))-1, 8*first.idx), 64))
		}
	}
	parts := make([]term, size)
	for i := 0; i < size; i++ {
		c, ok := cells[base+int64(i)]
		switch {
		case !ok:
			m.note("read of uninitialized stack: value unconstrained")
			parts[size-1-i] = b.fresh(8, "u")
		case c.ptr != nil:
			m.note("partial read of a spilled pointer: value unconstrained")
			parts[size-1-i] = b.fresh(8, "u")
		default:
			parts[size-1-i] = b.extract(c.src, 8*c.idx+7, 8*c.idx)
		}
	}
	return scalar(b.zext(b.concat(parts...), 64))
}

func (m *machine) stackStore(fr int, at term, size int, v value) {
	cells := m.st.writable(fr)
	if !at.known {
		m.note("stack write at a variable offset: the frame becomes unconstrained")
		clear(cells)
		return
	}
	base := int64(at.c)
	if v.isPtr() {
		if size != 8 {
			m.note("partial spill of a pointer: stored as an unconstrained number")
			v = scalar(m.b.fresh(64, "u"))
		} else {
			p := v
			for i := int64(0); i < 8; i++ {
				cells[base+i] = cell{ptr: &p, idx: uint16(i)}
			}
			return
		}
	}
	for i := 0; i < size; i++ {
		cells[base+int64(i)] = cell{src: v.off, idx: uint16(i)}
	}
}

// readMem returns n bytes at pointer p as one term (n*8 bits), for helper
// arguments such as map keys.
func (m *machine) readMem(p value, n int) (term, error) {
	if n <= 8 {
		v, err := m.load(p, 0, n)
		if err != nil {
			return term{}, err
		}
		return m.b.extract(v.off, uint16(8*n-1), 0), nil
	}
	var parts []term
	for at := 0; at < n; at += 8 {
		k := min(8, n-at)
		v, err := m.load(p, int64(at), k)
		if err != nil {
			return term{}, err
		}
		parts = append([]term{m.b.extract(v.off, uint16(8*k-1), 0)}, parts...)
	}
	return m.b.concat(parts...), nil
}

// havoc forgets what memory reachable through p holds.
func (m *machine) havoc(p value) {
	st := m.st
	switch p.reg {
	case regStack:
		cells := st.writable(p.obj)
		if !p.off.known {
			clear(cells)
			return
		}
		from := int64(p.off.c)
		for k := range cells {
			if k >= from {
				delete(cells, k)
			}
		}
		for k := from; k < 0; k++ {
			cells[k] = cell{src: m.b.fresh(8, "h"), idx: 0}
		}
	case regObj:
		arr := m.b.name("h")
		m.b.emit("(declare-const " + arr + " " + arraySort + ")")
		st.objs[p.obj].arr = arr
	case regPacket:
		arr := m.b.name("h")
		m.b.emit("(declare-const " + arr + " " + arraySort + ")")
		st.pkt.arr, st.pkt.base, st.pkt.wrote = arr, arr, nil
	}
}
