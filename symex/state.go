package symex

import (
	"fmt"
	"maps"
	"slices"
)

// region is the memory a pointer points into.
type region uint8

const (
	regNone   region = iota
	regCtx           // the program context
	regPacket        // the packet: offsets from the received data pointer
	regStack         // a stack frame; obj is the frame number
	regObj           // a map value or global data; obj indexes state.objs
	regMap           // a map itself; obj is its index in Graph.Maps, -1 unknown
)

// stackSize is MAX_BPF_STACK, the bytes of one frame below its frame
// pointer.
const stackSize = 512

var regionNames = [...]string{"scalar", "ctx", "packet", "stack", "map value", "map"}

func (r region) String() string { return regionNames[r] }

// value is a register or a spilled stack slot.
type value struct {
	reg region
	obj int
	off term // scalar: the value; pointer: offset into the region
	// null, when set, is the Bool that the pointer is NULL (a map
	// lookup's result); nil means known false. A pointer, not a term, so
	// that the registers a state copies at every edge stay small.
	null *term
}

// isNull is the Bool that v is a NULL pointer.
func (v value) isNull() term {
	if v.null == nil {
		return boolConst(false)
	}
	return *v.null
}

func scalar(t term) value { return value{reg: regNone, off: t} }

func pointer(r region, obj int, off term) value {
	return value{reg: r, obj: obj, off: off}
}

func (v value) isPtr() bool { return v.reg != regNone }

// cell is one stack byte: byte idx of the 64-bit term src, or of a spilled
// pointer.
type cell struct {
	src term
	idx uint16
	ptr *value // set when the byte belongs to a spilled pointer
}

// object is a symbolic memory object: a map value met by a lookup, or a
// global data section.
type object struct {
	mapIdx int    // index in Graph.Maps, -1 for an inner map's value
	size   int    // bytes
	init   string // name of the initial byte array
	arr    string // current version of the array
	key    term   // lookup key (width 8*KeySize); zero width for globals
	found  term   // Bool: the lookup found an element
	global bool
}

// frame is a call frame: callee-saved registers of the caller.
type frame struct {
	saved [5]value // R6..R10 of the caller
	stack int      // stack frame number of the caller
}

// packet is the packet's symbolic state. Offsets count from the data
// pointer the program received; head, meta and end move with the adjust
// helpers.
type packet struct {
	arr string // current version of the byte array
	// arr is base with the bytes of wrote stored, in order, at constant
	// offsets: a load at a constant offset takes the last byte stored
	// there, or base's, instead of reading through the chain of stores
	// (which the solver expands and simplifies again for every read).
	base  string
	wrote []stored
	head  term // data
	meta  term // data_meta
	end   term // data_end
}

// stored is a byte written to the packet at a constant index.
type stored struct {
	at uint32
	v  term
}

// state is the machine state after a prefix of a path.
type state struct {
	regs    [11]value
	frames  []frame
	stacks  []map[int64]cell // by stack frame number
	owned   []bool           // stacks[i] is this state's own, not shared
	frame   int              // current stack frame number
	pkt     packet
	objs    []object
	lookups map[string]int // map index + key term → object, while no update intervened
	verdict term
	exited  bool
	decided *pmap[string, bool] // Bools asserted on the path: true, or false for their negation
	// eqs holds the terms the path has asserted equal to a constant, by
	// name: a later comparison of the same term folds.
	eqs *pmap[string, uint64]
	// loads holds the terms of loads already made, by their expression:
	// loading the same bytes of the same array version again (a volatile
	// or re-read header field) gives the same term, so that facts about
	// the first load apply to the second.
	loads *pmap[string, term]
	lens  span // the packet lengths the path allows
	// versions counts the updates of each map (by index in Graph.Maps):
	// a lookup meets the contents of the map's current version. Version 0
	// is declared with the solver, later ones where the path meets them
	// (declared). Both maps are copied on write.
	versions map[int]int
	declared map[string]bool
}

func (s *state) clone() *state {
	c := *s
	c.frames = append([]frame(nil), s.frames...)
	// Stack frames are shared until written (writable).
	c.stacks = slices.Clone(s.stacks)
	c.owned = make([]bool, len(s.stacks))
	c.objs = append([]object(nil), s.objs...)
	if len(s.lookups) > 0 {
		c.lookups = maps.Clone(s.lookups)
	} else {
		c.lookups = map[string]int{}
	}
	c.decided = s.decided.fork()
	c.eqs = s.eqs.fork()
	c.loads = s.loads.fork()
	return &c
}

// writable returns stack frame fr for writing, copying it first if it is
// shared with the state this one was cloned from.
func (s *state) writable(fr int) map[int64]cell {
	if !s.owned[fr] {
		s.stacks[fr] = maps.Clone(s.stacks[fr])
		s.owned[fr] = true
	}
	return s.stacks[fr]
}

// newFrame adds an empty stack frame and returns its number.
func (s *state) newFrame() int {
	s.stacks = append(s.stacks, map[int64]cell{})
	s.owned = append(s.owned, true)
	return len(s.stacks) - 1
}

// unsupported reports an instruction or helper the executor cannot model.
func unsupported(format string, args ...any) error {
	return fmt.Errorf(format, args...)
}

// invalid reports an operation of the current instruction that the
// kernel's verifier rejects (a pointer of the wrong type, a read through
// a number): the program is bad input, not beyond the executor.
func (m *machine) invalid(format string, args ...any) error {
	return m.p.Invalid(m.cur, format, args...)
}
