package cfg

import (
	"strconv"
	"strings"

	"github.com/cilium/ebpf/asm"
)

// Where edges whose states hold packet pointers at different offsets meet
// (the exits of an unrolled walk over headers of variable length, left
// after one, two or three of them), one joined node would keep only the
// least offset, and every bounds check after it would prove the packet
// length of the shortest walk for all of them: a bit rate search then
// keys every longer walk by too small a packet. The expander therefore
// gives such edges a node each, grouped by the offsets of the packet
// pointers still live there, and the copies stay apart until the pointers
// die or meet again. Splitting never adds a path (each path enters
// exactly one copy); a copy's sharper state may show that a branch side
// no path of that copy takes is impossible.
//
// The same holds for a number that the block adds to a packet pointer: a
// walk that leaves with its position in a register (the byte index of a
// name, a constant on each exit) and checks the bytes after it in one
// joined node proves only the shortest exit's length. Edges whose states
// hold different constants in such a register get a node each too.
//
// It is bounded: at most maxSplit copies of a block for one set of
// incoming edges (maxScalarSplit when scalar offsets tell them apart), and
// none once the graph has splitNodes nodes.
const (
	maxSplit       = 64
	maxScalarSplit = 256
)

// splitNodes is a variable so that tests can switch splitting off.
var splitNodes = 20_000

// partition groups the edges entering block m of f by the offsets of the
// packet pointers live at its entry; one group when they all agree or the
// bounds above are reached.
func (x *expander) partition(f *Func, m int, in incoming) []incoming {
	if len(in) < 2 || len(x.g.Nodes) >= splitNodes {
		return []incoming{in}
	}
	live := x.liveIn(f)[m]
	offsets := x.scalarOffsets(f, m, in[0].st) & live
	limit := maxSplit
	if offsets != 0 {
		limit = maxScalarSplit
	}
	index := map[string]int{}
	var groups []incoming
	for _, pe := range in {
		key := packetOffsets(pe.st, live) + scalarConstants(pe.st, offsets)
		i, ok := index[key]
		if !ok {
			if len(groups) == limit {
				return []incoming{in}
			}
			i = len(groups)
			index[key] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], pe)
	}
	return groups
}

// packetOffsets names the (least) offsets of the packet pointers among the
// live registers of st.
func packetOffsets(st *state, live uint16) string {
	var sb strings.Builder
	for r := range asm.R10 {
		v := st.regs[r]
		if live&(1<<r) == 0 || v.kind != pointer || v.region != RegionPacket || !(v.exact || v.hasMin) {
			continue
		}
		sb.WriteString(strconv.Itoa(int(r)))
		sb.WriteByte(':')
		sb.WriteString(strconv.FormatInt(v.off, 10))
		sb.WriteByte(' ')
	}
	return sb.String()
}

// scalarOffsets returns the registers (bit r for Rr) whose value at the
// entry of block m of f the block adds to a packet pointer, as far as the
// registers of st (one incoming state) show which hold packet pointers.
func (x *expander) scalarOffsets(f *Func, m int, st *state) uint16 {
	var pkt, entry, out uint16 // packet pointers; registers still holding their entry value
	for r := range asm.R10 {
		entry |= 1 << r
		if v := st.regs[r]; v.kind == pointer && v.region == RegionPacket {
			pkt |= 1 << r
		}
	}
	b := f.Blocks[m]
	for i := b.First; i <= b.Last; i++ {
		ins := x.p.Insns[i]
		op := ins.OpCode
		_, def := regsOf(ins)
		if op.Class() == asm.ALU64Class && op.Source() == asm.RegSource && ins.Dst < asm.R10 && ins.Src < asm.R10 {
			d, s := uint16(1)<<ins.Dst, uint16(1)<<ins.Src
			switch op.ALUOp() {
			case asm.Add:
				switch {
				case pkt&d != 0 && pkt&s == 0:
					out |= s & entry
				case pkt&s != 0 && pkt&d == 0:
					out |= d & entry
					pkt |= d
				}
				entry &^= d
				continue
			case asm.Mov:
				pkt = pkt&^d | (pkt&s)>>ins.Src<<ins.Dst
				entry &^= d
				continue
			}
		}
		pkt &^= def
		entry &^= def
	}
	return out
}

// scalarConstants names the constants among the registers regs of st.
func scalarConstants(st *state, regs uint16) string {
	var sb strings.Builder
	for r := range asm.R10 {
		if v := st.regs[r]; regs&(1<<r) != 0 && v.kind == scalar {
			sb.WriteString("r" + strconv.Itoa(int(r)) + "=" + strconv.FormatInt(v.off, 10) + " ")
		}
	}
	return sb.String()
}

// liveIn returns, per block of f, the registers (bit r for Rr) whose
// value some path from the block's entry reads before writing, computed
// once per function.
func (x *expander) liveIn(f *Func) []uint16 {
	if x.live == nil {
		x.live = map[int][]uint16{}
	}
	if l, ok := x.live[f.Index]; ok {
		return l
	}
	n := len(f.Blocks)
	use, def := make([]uint16, n), make([]uint16, n)
	for m, b := range f.Blocks {
		for i := b.First; i <= b.Last; i++ {
			u, d := regsOf(x.p.Insns[i])
			use[m] |= u &^ def[m]
			def[m] |= d
		}
	}
	in := make([]uint16, n)
	for changed := true; changed; {
		changed = false
		for m := n - 1; m >= 0; m-- {
			b := f.Blocks[m]
			var out uint16
			for _, s := range []int{b.Next, b.Target} {
				if s >= 0 && b.Term != TermExit {
					out |= in[s]
				}
			}
			v := use[m] | out&^def[m]
			if v != in[m] {
				in[m], changed = v, true
			}
		}
	}
	x.live[f.Index] = in
	return in
}

const argRegs = 1<<asm.R1 | 1<<asm.R2 | 1<<asm.R3 | 1<<asm.R4 | 1<<asm.R5

// regsOf returns the registers an instruction reads and writes (R0–R9;
// the frame pointer R10 is never a packet pointer).
func regsOf(ins asm.Instruction) (use, def uint16) {
	bit := func(r asm.Register) uint16 {
		if r >= asm.R10 {
			return 0
		}
		return 1 << r
	}
	op := ins.OpCode
	reg := op.Source() == asm.RegSource
	switch cls := op.Class(); {
	case cls.IsALU():
		if op.ALUOp() != asm.Mov {
			use |= bit(ins.Dst)
		}
		if reg && op.ALUOp() != asm.Swap {
			use |= bit(ins.Src)
		}
		def |= bit(ins.Dst)
	case cls == asm.LdClass && op.Mode() == asm.ImmMode:
		def |= bit(ins.Dst)
	case cls == asm.LdClass: // LD_ABS / LD_IND read the context in R6 and clobber R0–R5
		use |= bit(asm.R6) | bit(ins.Src)
		def |= 1 | argRegs
	case cls == asm.LdXClass:
		use |= bit(ins.Src)
		def |= bit(ins.Dst)
	case cls == asm.StClass:
		use |= bit(ins.Dst)
	case cls == asm.StXClass:
		use |= bit(ins.Dst) | bit(ins.Src)
		if op.Mode() == asm.AtomicMode {
			def |= bit(ins.Src) | 1 // fetching atomics write Src, cmpxchg R0
			use |= 1
		}
	case cls.IsJump():
		switch op.JumpOp() {
		case asm.Call:
			use |= argRegs
			def |= 1 | argRegs
		case asm.Exit:
			use |= 1
		case asm.Ja:
		default:
			use |= bit(ins.Dst)
			if reg {
				use |= bit(ins.Src)
			}
		}
	}
	return use, def
}
