package interp

import (
	"encoding/binary"
	"fmt"
)

// A pointer is a tagged value: the tag is an index into machine.regions
// (0 means a scalar) and the value is base(tag)+offset, so pointer
// comparisons and arithmetic work on plain integers while every access is
// checked against the region the tag names.

// region is one piece of memory a run can address.
type region struct {
	kind Region
	buf  []byte
	ro   bool
	dead bool      // a returned stack frame
	mp   *mapModel // map value or map
	tags []uint32  // stack: pointer tag spilled to each 8-byte slot
}

func base(tag uint32) uint64 { return uint64(tag) << 32 }

// ptr returns the pointer value of offset off in region tag.
func ptr(tag uint32, off int) uint64 { return base(tag) + uint64(int64(off)) }

func (m *machine) newRegion(r region) uint32 {
	m.regions = append(m.regions, r)
	return uint32(len(m.regions) - 1)
}

// accessError describes a bad memory access by the instruction at pc.
// The verifier admits no program that can make one, so the program is
// invalid input.
func (m *machine) accessError(format string, args ...any) error {
	return m.it.prog.Invalid(m.pc, format, args...)
}

// mem returns the size bytes at pointer (tag, v), checked against the
// region's bounds. Packet accesses must lie in [data_meta, data_end).
func (m *machine) mem(tag uint32, v uint64, size int, write bool) ([]byte, *region, int, error) {
	if tag == 0 {
		return nil, nil, 0, m.accessError("%s through a scalar (0x%x), not a pointer", rw(write), v)
	}
	r := &m.regions[tag]
	off := int64(v - base(tag))
	lo, hi := int64(0), int64(len(r.buf))
	switch r.kind {
	case RegionPacket:
		lo, hi = int64(m.meta), int64(m.end)
	case RegionCtx:
		return nil, nil, 0, m.accessError("%s of %d bytes at context offset %d: only 4-byte loads of xdp_md fields", rw(write), size, off)
	case RegionMap:
		return nil, nil, 0, m.accessError("%s through a pointer to map %s", rw(write), r.mp.name)
	}
	if r.dead {
		return nil, nil, 0, m.accessError("%s into the stack frame of a returned function", rw(write))
	}
	if off < lo || off+int64(size) > hi {
		what := r.kind.String()
		if r.mp != nil {
			what += " of map " + r.mp.name
		}
		return nil, nil, 0, m.accessError("%s of %d bytes at offset %d outside %s [%d, %d)", rw(write), size, off, what, lo, hi)
	}
	if write && r.ro {
		return nil, nil, 0, m.accessError("write into read-only %s of map %s", r.kind, r.mp.name)
	}
	if write && r.mp != nil {
		m.writes[r.mp.idx]++
	}
	return r.buf[off : off+int64(size)], r, int(off), nil
}

func rw(write bool) string {
	if write {
		return "store"
	}
	return "load"
}

func get(b []byte) uint64 {
	switch len(b) {
	case 1:
		return uint64(b[0])
	case 2:
		return uint64(binary.LittleEndian.Uint16(b))
	case 4:
		return uint64(binary.LittleEndian.Uint32(b))
	}
	return binary.LittleEndian.Uint64(b)
}

func put(b []byte, v uint64) {
	switch len(b) {
	case 1:
		b[0] = byte(v)
	case 2:
		binary.LittleEndian.PutUint16(b, uint16(v))
	case 4:
		binary.LittleEndian.PutUint32(b, uint32(v))
	default:
		binary.LittleEndian.PutUint64(b, v)
	}
}

// load reads size bytes at (tag, v) and returns the value with the pointer
// tag a stack slot holds for a spilled pointer.
func (m *machine) load(tag uint32, v uint64, size int) (uint64, uint32, error) {
	if tag != 0 && m.regions[tag].kind == RegionCtx {
		return m.ctxLoad(int64(v-base(tag)), size)
	}
	b, r, off, err := m.mem(tag, v, size, false)
	if err != nil {
		return 0, 0, err
	}
	m.loads[r.kind]++
	val := get(b)
	if r.tags != nil && size == 8 && off%8 == 0 {
		return val, r.tags[off/8], nil
	}
	return val, 0, nil
}

// store writes size bytes of val at (tag, v); vtag is val's pointer tag,
// kept for 8-byte aligned spills to the stack.
func (m *machine) store(tag uint32, v uint64, size int, val uint64, vtag uint32) error {
	b, r, off, err := m.mem(tag, v, size, true)
	if err != nil {
		return err
	}
	m.stores[r.kind]++
	put(b, val)
	if r.tags != nil {
		for s := off / 8; s <= (off+size-1)/8; s++ {
			r.tags[s] = 0
		}
		if size == 8 && off%8 == 0 {
			r.tags[off/8] = vtag
		}
	}
	return nil
}

// ctxLoad reads a field of struct xdp_md.
func (m *machine) ctxLoad(off int64, size int) (uint64, uint32, error) {
	if size != 4 || off < 0 || off >= ctxSize || off%4 != 0 {
		return 0, 0, m.accessError("load of %d bytes at context offset %d: only 4-byte loads of xdp_md fields", size, off)
	}
	m.loads[RegionCtx]++
	switch off {
	case 0:
		return ptr(m.pktTag, m.data), m.pktTag, nil
	case 4:
		return ptr(m.pktTag, m.end), m.pktTag, nil
	case 8:
		return ptr(m.pktTag, m.meta), m.pktTag, nil
	case 12:
		return uint64(m.in.Ifindex), 0, nil
	case 16:
		return uint64(m.in.RxQueue), 0, nil
	}
	return 0, 0, nil // egress_ifindex
}

// bytesAt returns n bytes a helper argument points to.
func (m *machine) bytesAt(tag uint32, v uint64, n int, what string) ([]byte, error) {
	if n == 0 {
		return nil, nil
	}
	b, _, _, err := m.mem(tag, v, n, false)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return b, nil
}
