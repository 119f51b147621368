package nfp

import (
	"github.com/cilium/ebpf/asm"

	"github.com/dpperf/dpperf/bpfprog"
)

// Region is the memory an instruction accesses, as the verifier's pointer
// types tell the JIT.
type Region uint8

const (
	Unknown  Region = iota // not known: priced as the dearest region
	Packet                 // PTR_TO_PACKET: CTM/SRAM
	Stack                  // PTR_TO_STACK: the thread's local memory
	Ctx                    // PTR_TO_CTX: struct xdp_md, held in registers
	MapValue               // PTR_TO_MAP_VALUE: DRAM
)

// Prog is a program prepared for translation: what the JIT's verifier
// pass and optimisations know about each instruction.
type Prog struct {
	p       *bpfprog.Program
	regions []Region
	maps    []*bpfprog.Map
	jumpDst []bool
	zext    []bool           // FLAG_INSN_DO_ZEXT
	cache   []pktCache       // nfp_bpf_opt_pkt_cache
	depth   []int            // stack frame depth of each function, rounded up to 8
	copies  map[int]*copyRun // nfp_bpf_opt_ldst_gather runs by their first load
	copyOf  map[int]*copyRun // the same runs by their first store
	merged  []bool           // loads and stores a run carries (skipped)
}

// pktCache is the packet cache range of a packet load.
type pktCache struct {
	init       bool // the load reads the range into transfer registers
	start, end int
}

// Analyze prepares p. regions holds the region each memory instruction
// accesses and maps the map of each map helper call (nil elsewhere), both
// indexed like p.Insns; missing entries count as Unknown and no map.
func Analyze(p *bpfprog.Program, regions []Region, maps []*bpfprog.Map) *Prog {
	n := len(p.Insns)
	a := &Prog{p: p, regions: make([]Region, n), maps: make([]*bpfprog.Map, n)}
	copy(a.regions, regions)
	copy(a.maps, maps)
	a.jumpDst = jumpTargets(p)
	a.zext = make([]bool, n)
	for i := range p.Insns {
		a.zext[i] = a.needsZext(i)
	}
	a.depth = make([]int, len(p.Funcs))
	for f, fn := range p.Funcs {
		a.depth[f] = stackDepth(p.Insns[fn.Start:fn.End])
	}
	a.copies, a.merged = a.ldstGather()
	a.copyOf = map[int]*copyRun{}
	for _, r := range a.copies {
		a.copyOf[r.store] = r
	}
	a.cache = a.packetCache()
	return a
}

// jumpTargets marks the instructions some jump lands on.
func jumpTargets(p *bpfprog.Program) []bool {
	dst := make([]bool, len(p.Insns))
	byRaw := make(map[asm.RawInstructionOffset]int, len(p.Insns))
	for i, off := range p.Offsets {
		byRaw[off] = i
	}
	for i, ins := range p.Insns {
		op := ins.OpCode
		if !op.Class().IsJump() || i >= len(p.Offsets) {
			continue
		}
		switch op.JumpOp() {
		case asm.Exit, asm.Call:
			continue
		}
		if t, ok := byRaw[p.Offsets[i]+1+asm.RawInstructionOffset(ins.Offset)]; ok {
			dst[t] = true
		}
	}
	return dst
}

// stackDepth is the deepest r10-relative slot a function touches, rounded
// up to 8 bytes as the verifier rounds stack_depth.
func stackDepth(insns asm.Instructions) int {
	d := 0
	for _, ins := range insns {
		switch cls := ins.OpCode.Class(); {
		case cls == asm.LdXClass && ins.Src == asm.R10, (cls == asm.StClass || cls == asm.StXClass) && ins.Dst == asm.R10:
			d = max(d, -int(ins.Offset))
		case cls == asm.ALU64Class && ins.OpCode.ALUOp() == asm.Add && ins.OpCode.Source() == asm.ImmSource && ins.Constant < 0:
			d = max(d, -int(ins.Constant)) // r = r10; r += -k: a pointer into the frame
		}
	}
	return (d + 7) &^ 7
}

// reads returns the registers instruction ins reads and whether each read
// uses the upper 32 bits; defs the registers it writes.
func reads(ins asm.Instruction) (regs []asm.Register, wide []bool, defs []asm.Register) {
	op := ins.OpCode
	read := func(r asm.Register, w bool) { regs = append(regs, r); wide = append(wide, w) }
	switch cls := op.Class(); {
	case cls.IsALU():
		w := cls == asm.ALU64Class
		if op.ALUOp() == asm.Swap {
			w = ins.Constant == 64
		}
		if op.ALUOp() != asm.Mov {
			read(ins.Dst, w)
		}
		if op.Source() == asm.RegSource && op.ALUOp() != asm.Swap && op.ALUOp() != asm.Neg {
			read(ins.Src, w)
		}
		defs = append(defs, ins.Dst)
	case cls == asm.LdClass:
		if op.Mode() == asm.IndMode {
			read(ins.Src, true)
		}
		defs = append(defs, ins.Dst)
		if op.Mode() == asm.AbsMode || op.Mode() == asm.IndMode {
			defs = append(defs, asm.R0)
		}
	case cls == asm.LdXClass:
		read(ins.Src, true)
		defs = append(defs, ins.Dst)
	case cls == asm.StClass:
		read(ins.Dst, true)
	case cls == asm.StXClass:
		read(ins.Dst, true)
		read(ins.Src, op.Size() == asm.DWord || op.Mode() == asm.AtomicMode)
	case cls.IsJump():
		switch op.JumpOp() {
		case asm.Ja:
		case asm.Exit:
			read(asm.R0, true)
		case asm.Call:
			for r := asm.R1; r <= asm.R5; r++ {
				read(r, true)
			}
			for r := asm.R0; r <= asm.R5; r++ {
				defs = append(defs, r)
			}
		default:
			w := cls == asm.JumpClass
			read(ins.Dst, w)
			if op.Source() == asm.RegSource {
				read(ins.Src, w)
			}
		}
	}
	return regs, wide, defs
}

// needsZext says whether the 32-bit result instruction i writes may be read
// as 64 bits before it is written again. The kernel's verifier decides
// this over all paths; here the straight line after i is scanned, and the
// answer is yes wherever control may leave it first. Only instructions
// whose JIT sequence ends in wrp_zext ask.
func (a *Prog) needsZext(i int) bool {
	ins := a.p.Insns[i]
	op := ins.OpCode
	switch cls := op.Class(); {
	case cls == asm.ALUClass && op.ALUOp() != asm.Mov && op.ALUOp() != asm.Swap:
	case cls == asm.LdXClass && op.Size() != asm.DWord:
	case cls == asm.LdClass && (op.Mode() == asm.AbsMode || op.Mode() == asm.IndMode):
	default:
		return false
	}
	dst := ins.Dst
	f := a.p.FuncOf(i)
	end := a.p.Funcs[f].End
	for j := i + 1; j < end; j++ {
		if a.jumpDst[j] {
			return true // another path joins: its reads are not followed
		}
		regs, wide, defs := reads(a.p.Insns[j])
		for k, r := range regs {
			if r == dst && wide[k] {
				return true
			}
		}
		for _, r := range defs {
			if r == dst {
				return false
			}
		}
		if a.p.Insns[j].OpCode.Class().IsJump() && a.p.Insns[j].OpCode.JumpOp() != asm.Call {
			return a.p.Insns[j].OpCode.JumpOp() != asm.Exit
		}
	}
	return true
}

// constant returns the value register r holds before instruction i when
// the straight line before i sets it from a constant (mov of an
// immediate, not written since, no jump landing in between).
func (a *Prog) constant(i int, r asm.Register) (int64, bool) {
	start := a.p.Funcs[a.p.FuncOf(i)].Start
	for j := i - 1; j >= start; j-- {
		ins := a.p.Insns[j]
		_, _, defs := reads(ins)
		for _, d := range defs {
			if d != r {
				continue
			}
			op := ins.OpCode
			if op.Class().IsALU() && op.ALUOp() == asm.Mov && op.Source() == asm.ImmSource {
				if op.Class() == asm.ALUClass {
					return int64(uint32(ins.Constant)), true
				}
				return ins.Constant, true
			}
			if op.Class() == asm.LdClass && op.Mode() == asm.ImmMode && !ins.IsLoadFromMap() {
				return ins.Constant, true
			}
			return 0, false
		}
		if a.jumpDst[j] {
			return 0, false
		}
	}
	return 0, false
}

// packetCache follows nfp_bpf_opt_pkt_cache: along the instruction list,
// packet loads through the same pointer share one read of at most 64
// bytes until a jump lands, a helper is called, the packet is written or
// a load from other memory (stack, map value, context) comes between.
// The verifier matches pointers by identity; here a load joins a range
// only through the register that started it, not written since, which
// never shares more than the JIT does.
func (a *Prog) packetCache() []pktCache {
	out := make([]pktCache, len(a.p.Insns))
	avail := false
	head := -1
	var base asm.Register
	for i, ins := range a.p.Insns {
		if a.jumpDst[i] {
			avail = false
		}
		op := ins.OpCode
		cls := op.Class()
		if avail {
			_, _, defs := reads(ins)
			for _, d := range defs {
				if d == base && !(cls == asm.LdXClass && a.regions[i] == Packet && ins.Dst == base && ins.Src == base) {
					avail = false
				}
			}
		}
		switch {
		case (cls == asm.StXClass || cls == asm.StClass) && a.regions[i] == Packet,
			cls.IsJump() && op.JumpOp() == asm.Call,
			cls == asm.LdClass && (op.Mode() == asm.AbsMode || op.Mode() == asm.IndMode):
			avail = false
			continue
		case cls != asm.LdXClass:
			continue
		case a.regions[i] != Packet:
			avail = false // any other load ends the range (ptr.type != PTR_TO_PACKET)
			continue
		}
		size := op.Size().Sizeof()
		off := int(ins.Offset)
		if avail && ins.Src == base {
			c := &out[head]
			lo, hi := min(c.start, off), max(c.end, off+size)
			if hi-lo <= 64 {
				c.start, c.end = lo, hi
				out[i] = pktCache{start: -1}
				if ins.Dst == base {
					avail = false // the pointer is overwritten by the load
				}
				continue
			}
		}
		avail = ins.Dst != ins.Src
		head, base = i, ins.Src
		out[i] = pktCache{init: true, start: off, end: off + size}
	}
	// Members of a range learn its final extent.
	var cur pktCache
	for i := range out {
		switch {
		case out[i].init:
			cur = out[i]
		case out[i].start == -1:
			out[i] = pktCache{start: cur.start, end: cur.end}
		}
	}
	return out
}
