package interptest

import (
	"encoding/binary"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/dpperf/dpperf/bpfprog"
)

// GenProgram builds an XDP program from bytes (a fuzzer's input), for
// differential tests of the engines that evaluate instructions: ALU32 and
// ALU64 operations with registers and immediates, byte swaps, 64-bit
// immediates, conditional forward jumps (every comparison, 32 and 64 bit,
// immediate and register), packet loads (sign-extending too) and stores
// after a bounds check against data_end (at constant offsets, and at a
// bounded variable one), packet pointer arithmetic, context loads, stack
// stores and loads, pointer spills, atomics on the stack, and exits; the
// last exit mostly returns a digest of every number the program holds.
// Every byte string gives a program, the same one each time, that the
// verifier would accept in spirit: registers are written before they are
// read, packet accesses lie within a checked range, stack accesses are
// aligned and read only bytes written before, shifts by an immediate stay
// below the width, divisions by an immediate are by a non-zero one, jumps
// go forward (never to the next instruction) and no instruction is dead.
func GenProgram(data []byte) (*bpfprog.Program, error) {
	return bpfprog.New("gen", ebpf.XDP, GenInsns(data), nil)
}

// GenInsns returns the instructions of GenProgram(data).
func GenInsns(data []byte) asm.Instructions {
	g := &gen{src: data, pend: map[int][]gstate{}, live: true}
	g.st.r[1] = reg{k: kCtx}
	g.end = 6 + g.n(60)
	g.emit(asm.LoadMem(asm.R2, asm.R1, 0, asm.Word)) // data
	g.emit(asm.LoadMem(asm.R3, asm.R1, 4, asm.Word)) // data_end
	g.st.r[2], g.st.r[3] = reg{k: kPkt}, reg{k: kEnd}
	if g.n(4) != 0 {
		// The usual start: a header's bounds check, leaving with an
		// action when the packet is shorter.
		n := int16(8 + g.n(40))
		g.emit(asm.Mov.Reg(asm.R4, asm.R2))
		g.emit(asm.Add.Imm(asm.R4, int32(n)))
		g.st.r[4] = reg{k: kPkt, off: n}
		g.jump(asm.JGT.Reg(asm.R4, asm.R3, ""), toEnd, g.st)
		g.st.safe[0] = n
	}
	for len(g.out) < g.end {
		if g.pos >= len(g.src) {
			g.shrink()
		}
		g.arrive()
		if len(g.out) < g.end {
			g.step()
		}
	}
	g.arrive()
	g.epilogue()
	if len(g.pend[toEnd]) > 0 {
		// Where early bounds checks leave: an action of its own.
		g.epi = len(g.out)
		g.emit(asm.Mov.Imm(asm.R0, int32(g.n(4))))
		g.emit(asm.Return())
	}
	return g.finish()
}

type kind uint8

const (
	kNone   kind = iota
	kScalar      // a number
	kCtx         // the context
	kPkt         // a packet pointer: base id plus off
	kEnd         // data_end
)

// reg is what the generator knows of a register or a spilled pointer.
type reg struct {
	k  kind
	id uint8 // kPkt: the base; 0 is data, others data plus a bounded variable
	// off is a packet pointer's offset from its base.
	off int16
}

const (
	stackWin = 32 // bytes below the frame pointer the programs use
	maxBases = 8  // bases of packet pointers (data and variable offsets)
)

// gstate is what holds at an instruction on every way to it.
type gstate struct {
	r     [10]reg
	safe  [maxBases]int16   // per base: the bytes after it bounds checks proved in the packet
	init  [stackWin]bool    // stack bytes written with a number; 0 is R10-stackWin
	spill [stackWin / 8]reg // pointers spilled to 8-byte slots
}

// meet is what holds where two ways join.
func meet(a, b gstate) gstate {
	for i := range a.r {
		if a.r[i] != b.r[i] {
			a.r[i] = reg{}
		}
	}
	for i := range a.safe {
		a.safe[i] = min(a.safe[i], b.safe[i])
	}
	for i := range a.init {
		a.init[i] = a.init[i] && b.init[i]
	}
	for i := range a.spill {
		if a.spill[i] != b.spill[i] {
			a.spill[i] = reg{}
		}
	}
	return a
}

// gen is a program being generated. Instructions are indexed in the
// order emitted; jump targets are indices, resolved to raw offsets by
// finish.
type gen struct {
	src  []byte
	pos  int
	out  []asm.Instruction
	tgt  []int // jump target per instruction, -1 if none, or toEnd
	st   gstate
	live bool             // control falls into the next instruction
	pend map[int][]gstate // states jumps carry to their targets
	end  int              // index of the epilogue
	epi  int              // index of the block early bounds checks leave to
	ids  uint8            // bases of packet pointers in use
}

// byte returns the next input byte, 0 once the input is exhausted.
func (g *gen) byte() byte {
	if g.pos >= len(g.src) {
		return 0
	}
	g.pos++
	return g.src[g.pos-1]
}

func (g *gen) n(k int) int { return int(g.byte()) % k }
func (g *gen) bit() bool   { return g.byte()&1 != 0 }

func (g *gen) bytes(k int) uint64 {
	var b [8]byte
	for i := 0; i < k; i++ {
		b[i] = g.byte()
	}
	return binary.LittleEndian.Uint64(b[:])
}

var interesting = []int32{0, 1, -1, 2, 7, 8, 14, 31, 32, 63, 64, 0x7f, 0x80, 0xff, 0x800, 0xffff, 0x7fffffff, -0x80000000}

func (g *gen) imm() int32 {
	switch g.n(4) {
	case 0:
		return int32(int8(g.byte()))
	case 1:
		return interesting[g.n(len(interesting))]
	}
	return int32(g.bytes(4))
}

func (g *gen) emit(ins asm.Instruction) {
	g.out, g.tgt = append(g.out, ins), append(g.tgt, -1)
}

// jump emits a jump to instruction to, which st reaches.
func (g *gen) jump(ins asm.Instruction, to int, st gstate) {
	g.out, g.tgt = append(g.out, ins), append(g.tgt, to)
	g.pend[to] = append(g.pend[to], st)
}

// toEnd is the target of jumps to the block after the epilogue, which
// returns an action.
const toEnd = -2

// arrive joins the states the jumps to the next instruction carry.
func (g *gen) arrive() {
	i := len(g.out)
	for _, s := range g.pend[i] {
		if g.live {
			g.st = meet(g.st, s)
		} else {
			g.st, g.live = s, true
		}
	}
	delete(g.pend, i)
}

// shrink moves the epilogue to the furthest pending jump target, once
// the input is exhausted.
func (g *gen) shrink() {
	end := len(g.out)
	for t := range g.pend {
		end = max(end, t) // toEnd is below any
	}
	g.end = min(g.end, end)
}

// room reports whether k instructions fit before the epilogue with no
// jump landing between them.
func (g *gen) room(k int) bool {
	i := len(g.out)
	if i+k > g.end {
		return false
	}
	for j := i + 1; j < i+k; j++ {
		if len(g.pend[j]) > 0 {
			return false
		}
	}
	return true
}

// target picks where the jump at instruction i (i+2 <= end) goes:
// forward, past the next instruction (a conditional jump to the next
// instruction has both edges enter one node, and an instruction path
// cannot tell which it took: cfg.PathOf takes the first).
func (g *gen) target(i int) int { return i + 2 + g.n(min(g.end-i-1, 12)) }

// pick chooses a register (R0-R9) that ok accepts.
func (g *gen) pick(ok func(reg) bool) (asm.Register, bool) {
	var cands []asm.Register
	for r := range g.st.r {
		if ok(g.st.r[r]) {
			cands = append(cands, asm.Register(r))
		}
	}
	if len(cands) == 0 {
		return 0, false
	}
	return cands[g.n(len(cands))], true
}

func isScalar(r reg) bool { return r.k == kScalar }

// dst chooses any register R0-R9 to write, other than those in not.
func (g *gen) dst(not ...asm.Register) asm.Register {
	r := asm.Register(g.n(10))
	for again := true; again; {
		again = false
		for _, x := range not {
			if r == x {
				r, again = (r+1)%10, true
			}
		}
	}
	return r
}

// finish resolves jump targets to offsets in raw instructions.
func (g *gen) finish() asm.Instructions {
	at := make([]int, len(g.out)+1)
	for i, ins := range g.out {
		at[i+1] = at[i] + int(ins.Width())
	}
	for i, t := range g.tgt {
		if t == toEnd {
			t = g.epi
		}
		if t >= 0 {
			g.out[i].Offset = int16(at[t] - at[i] - 1)
		}
	}
	return g.out
}
