package cfg

import (
	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/dpperf/dpperf/bpfprog"
)

// Region is the memory region a pointer points into. The BPF verifier keeps
// pointers inside their region, so a pointer's region never changes under
// arithmetic (the segmented memory model).
type Region uint8

const (
	RegionNone      Region = iota // not a pointer, or not known to be one
	RegionCtx                     // the program context (struct xdp_md, __sk_buff)
	RegionPacket                  // packet bytes [data, data_end)
	RegionPacketEnd               // data_end
	RegionStack                   // a BPF stack frame
	RegionMapValue                // a map value (or global data)
	RegionMapPtr                  // a map itself (argument to map helpers)
)

var regionNames = [...]string{"none", "ctx", "packet", "packet_end", "stack", "map_value", "map"}

func (r Region) String() string { return regionNames[r] }

type kind uint8

const (
	unknown kind = iota // any value
	scalar              // a known constant in off
	pointer             // a pointer into region at base+off (off known when exact)
	between             // a scalar in [off, hi], unsigned: constants joined
)

// value is the abstract value of a register or a stack slot.
type value struct {
	kind   kind
	region Region
	exact  bool // pointer offset known
	// hasMin: an inexact pointer whose offset is at least off (a pointer
	// plus a scalar of known least value, such as a header length).
	hasMin bool
	base   int32 // stack: frame id; map value / map: map index
	off    int64 // scalar: the constant; pointer: the offset (the least when hasMin); between: the least
	hi     int64 // between: the greatest (unsigned)
	// maybeNull: a pointer that may be NULL (a map lookup's result not
	// known to find an element). Other pointers never are.
	maybeNull bool
}

var top = value{}

// bounds returns the unsigned range of a scalar or a joined scalar.
func (v value) bounds() (lo, hi uint64, ok bool) {
	switch v.kind {
	case scalar:
		return uint64(v.off), uint64(v.off), true
	case between:
		return uint64(v.off), uint64(v.hi), true
	}
	return 0, 0, false
}

func constant(v int64) value { return value{kind: scalar, off: v} }

func ptr(r Region, base int32, off int64) value {
	return value{kind: pointer, region: r, base: base, off: off, exact: true}
}

func join(a, b value) value {
	if a == b {
		return a
	}
	if lo, hi, ok := a.bounds(); ok {
		if blo, bhi, ok := b.bounds(); ok {
			return value{kind: between, off: int64(min(lo, blo)), hi: int64(max(hi, bhi))}
		}
	}
	if a.kind == pointer && b.kind == pointer && a.region == b.region && a.base == b.base {
		v := value{kind: pointer, region: a.region, base: a.base, maybeNull: a.maybeNull || b.maybeNull}
		if (a.exact || a.hasMin) && (b.exact || b.hasMin) {
			v.hasMin, v.off = true, min(a.off, b.off)
		}
		return v
	}
	return top
}

type slotKey struct {
	frame int32
	off   int64
}

type slot struct {
	size int
	v    value
}

// state is the abstract machine state at a program point.
type state struct {
	regs     [11]value
	stack    map[slotKey]slot
	adjusted bool // the packet's head or tail may have moved
}

func (s *state) clone() *state {
	c := &state{regs: s.regs, stack: make(map[slotKey]slot, len(s.stack)), adjusted: s.adjusted}
	for k, v := range s.stack {
		c.stack[k] = v
	}
	return c
}

func joinStates(a, b *state) *state {
	if a == nil {
		return b.clone()
	}
	c := &state{stack: map[slotKey]slot{}, adjusted: a.adjusted || b.adjusted}
	for i := range a.regs {
		c.regs[i] = join(a.regs[i], b.regs[i])
	}
	for k, sa := range a.stack {
		if sb, ok := b.stack[k]; ok && sa.size == sb.size {
			if v := join(sa.v, sb.v); v != top {
				c.stack[k] = slot{sa.size, v}
			}
		}
	}
	return c
}

// clearFrame forgets every slot of a stack frame.
func (s *state) clearFrame(frame int32) {
	for k := range s.stack {
		if k.frame == frame {
			delete(s.stack, k)
		}
	}
}

func (s *state) store(p value, off int64, size int, v value) {
	switch {
	case p.kind == pointer && p.region == RegionStack && p.exact:
		at := p.off + off
		for k, sl := range s.stack {
			if k.frame == p.base && k.off < at+int64(size) && at < k.off+int64(sl.size) {
				delete(s.stack, k)
			}
		}
		if v != top {
			s.stack[slotKey{p.base, at}] = slot{size, v}
		}
	case p.kind == pointer && p.region == RegionStack:
		s.clearFrame(p.base)
	case p.kind == pointer:
		// Packet, map value or context memory: not tracked.
	default:
		s.stack = map[slotKey]slot{}
	}
}

func (s *state) load(p value, off int64, size int) value {
	if p.kind != pointer || p.region != RegionStack || !p.exact {
		return top
	}
	sl, ok := s.stack[slotKey{p.base, p.off + off}]
	if !ok || sl.size != size {
		return top
	}
	if size < 8 {
		// A narrow store kept the low bytes only, and a narrow load
		// zero-extends them; no pointer survives it.
		lo, hi, ok := sl.v.bounds()
		mask := uint64(1)<<(8*size) - 1
		switch {
		case !ok:
			return top
		case lo == hi:
			return constant(int64(lo & mask))
		case hi <= mask:
			return sl.v
		}
		return top
	}
	return sl.v
}

// ctxLoad gives the value loaded from the context at off for a program type.
func ctxLoad(t ebpf.ProgramType, off int64) value {
	switch t {
	case ebpf.XDP:
		switch off {
		case 0:
			return ptr(RegionPacket, 0, 0)
		case 4:
			return ptr(RegionPacketEnd, 0, 0)
		case 8:
			return value{kind: pointer, region: RegionPacket}
		}
	case ebpf.SchedCLS, ebpf.SchedACT, ebpf.SocketFilter, ebpf.CGroupSKB:
		switch off {
		case 76:
			return ptr(RegionPacket, 0, 0)
		case 80:
			return ptr(RegionPacketEnd, 0, 0)
		case 140:
			return value{kind: pointer, region: RegionPacket}
		}
	}
	return top
}

// alu applies an ALU operation to abstract values.
func alu(op asm.ALUOp, is32 bool, dst, src value) value {
	if op == asm.Mov {
		if is32 {
			if src.kind == scalar {
				return constant(int64(uint32(src.off)))
			}
			return top
		}
		return src
	}
	if dst.kind == pointer && (op == asm.Add || op == asm.Sub) && !is32 {
		switch {
		case src.kind == scalar && (dst.exact || dst.hasMin):
			if op == asm.Add {
				dst.off += src.off
			} else {
				dst.off -= src.off
			}
			return dst
		case src.kind == pointer && op == asm.Sub:
			if src.region == dst.region && src.base == dst.base && src.exact && dst.exact {
				return constant(dst.off - src.off)
			}
			return top
		case src.kind == between && op == asm.Add && (dst.exact || dst.hasMin):
			// The offset grows by at least the scalar's least value.
			return value{kind: pointer, region: dst.region, base: dst.base, maybeNull: dst.maybeNull, hasMin: true, off: dst.off + src.off}
		default:
			return value{kind: pointer, region: dst.region, base: dst.base, maybeNull: dst.maybeNull}
		}
	}
	if src.kind == pointer && op == asm.Add && dst.kind != pointer && !is32 {
		// scalar += pointer: the verifier refuses pointer += pointer, so
		// dst holds a scalar even when its value is not known (a variable
		// offset such as an extension header's length), and the sum is a
		// pointer into src's region at an offset known only for constants.
		return alu(op, false, src, dst)
	}
	if (dst.kind == between || src.kind == between) && (dst.kind == between || dst.kind == scalar) &&
		(src.kind == between || src.kind == scalar) && !is32 {
		return rangeALU(op, dst, src)
	}
	if dst.kind != scalar || (src.kind != scalar && op != asm.Neg && op != asm.Swap) {
		return top
	}
	r, ok := bpfprog.ALU(op, width(is32), uint64(dst.off), uint64(src.off))
	if !ok {
		return top
	}
	return constant(int64(r))
}

// rangeALU applies a 64-bit operation to two ranges of unsigned values (a
// constant is a range of one; clang also leaves shifts by one of two
// amounts where it merges the length rules of two header kinds): the
// operations whose result range follows from the ends of the operands'
// ranges, as long as nothing overflows; others give top.
func rangeALU(op asm.ALUOp, a, b value) value {
	const limit = 1 << 40
	alo, ahi, _ := a.bounds()
	blo, bhi, _ := b.bounds()
	if ahi >= limit || bhi >= limit || alo > ahi || blo > bhi {
		return top
	}
	switch op {
	case asm.Add:
		return betweenOf(alo+blo, ahi+bhi, limit)
	case asm.Mul:
		return betweenOf(alo*blo, ahi*bhi, limit)
	case asm.LSh:
		if bhi >= 24 {
			return top
		}
		return betweenOf(alo<<blo, ahi<<bhi, limit)
	case asm.RSh:
		return betweenOf(alo>>bhi, ahi>>blo, limit)
	case asm.And:
		return betweenOf(0, min(ahi, bhi), limit)
	}
	return top
}

func betweenOf(lo, hi, limit uint64) value {
	if hi >= limit {
		return top
	}
	if lo == hi {
		return constant(int64(lo))
	}
	return value{kind: between, off: int64(lo), hi: int64(hi)}
}

func width(is32 bool) int {
	if is32 {
		return 32
	}
	return 64
}

// decide evaluates a conditional jump: known reports whether the outcome is
// certain, taken what it is.
func decide(op asm.JumpOp, is32 bool, a, b value) (taken, known bool) {
	if b.kind == pointer && a.kind != pointer {
		a, b, op = b, a, bpfprog.Mirror(op)
	}
	if a.kind == pointer && !a.maybeNull && b.kind == scalar && b.off == 0 && !is32 {
		// A pointer that cannot be NULL against NULL: only (in)equality
		// is decided; the verifier refuses orderings of such pointers.
		switch op {
		case asm.JEq:
			return false, true
		case asm.JNE:
			return true, true
		}
		return false, false
	}
	switch {
	case a.kind == scalar && b.kind == scalar:
	case a.kind == pointer && b.kind == pointer && a.exact && b.exact &&
		a.region == b.region && a.base == b.base:
	default:
		return false, false
	}
	return bpfprog.Cmp(op, width(is32), uint64(a.off), uint64(b.off))
}

// readOnlyHelpers do not write through their pointer arguments, so the stack
// slots those arguments point to survive the call.
var readOnlyHelpers = map[asm.BuiltinFunc]bool{
	asm.FnMapLookupElem: true, asm.FnMapUpdateElem: true, asm.FnMapDeleteElem: true,
	asm.FnCsumDiff: true, asm.FnKtimeGetNs: true, asm.FnGetPrandomU32: true,
	asm.FnRedirect: true, asm.FnRedirectMap: true, asm.FnXdpAdjustHead: true,
	asm.FnXdpAdjustTail: true, asm.FnXdpAdjustMeta: true, asm.FnTailCall: true,
	asm.FnGetSmpProcessorId: true, asm.FnKtimeGetBootNs: true, asm.FnPerfEventOutput: true,
	asm.FnMapPushElem: true, asm.FnMapPeekElem: false, asm.FnMapPopElem: false,
	asm.FnRingbufOutput: true, asm.FnTracePrintk: true,
}
