package interp

import (
	"fmt"
	"math/bits"

	"github.com/cilium/ebpf/asm"

	"github.com/dpperf/dpperf/bpfprog"
)

// machine is the state of one run.
type machine struct {
	it   *Interp
	maps *Maps
	in   Input
	pc   int

	regs [11]uint64
	tags [11]uint32

	regions []region
	pktTag  uint32
	meta    int // data_meta, data and data_end as offsets in pkt.buf
	data    int
	end     int
	frames  []frame
	mapTags []uint32 // per map: tag of its map pointer, 0 until used
	valTags []uint32 // per map: tag of its global-data value, 0 until used

	path          []int32
	loads, stores [numRegions]int
	calls         []Call
	loops         map[[2]int32]int
	redirect      *Redirect
	printk        []string
	nondet        bool
	writes        []int
	buf           [FrameSize]byte // the XDP frame holding the packet
	stackPool     [][]byte
}

// frame is a bpf-to-bpf call's saved caller state.
type frame struct {
	ret   int
	saved [5]uint64 // R6-R10
	tags  [5]uint32
	stack uint32
}

func (m *machine) reset(it *Interp, maps *Maps, in Input) {
	if in.Ifindex == 0 {
		in.Ifindex = 1
	}
	*m = machine{it: it, maps: maps, in: in, path: m.path[:0], regions: m.regions[:0],
		calls: m.calls[:0], frames: m.frames[:0], stackPool: m.stackPool, printk: m.printk[:0]}
	m.regions = append(m.regions, region{}) // tag 0: scalars
	ctx := m.newRegion(region{kind: RegionCtx})
	m.data = Headroom
	m.meta = Headroom
	m.end = Headroom + copy(m.buf[Headroom:], in.Packet)
	m.pktTag = m.newRegion(region{kind: RegionPacket, buf: m.buf[:FrameSize-Tailroom]})
	m.mapTags = make([]uint32, len(maps.list))
	m.valTags = make([]uint32, len(maps.list))
	m.writes = make([]int, len(maps.list))
	m.loops = map[[2]int32]int{}
	m.regs[1], m.tags[1] = ptr(ctx, 0), ctx
	st := m.newStack(0)
	m.regs[10], m.tags[10] = ptr(st, stackSize), st
}

// newStack returns a zeroed stack frame for call depth depth (0 for the
// entry function), reusing the buffers of earlier runs.
func (m *machine) newStack(depth int) uint32 {
	var buf []byte
	if depth < len(m.stackPool) {
		buf = m.stackPool[depth]
		clear(buf)
	} else {
		buf = make([]byte, stackSize)
		m.stackPool = append(m.stackPool, buf)
	}
	return m.newRegion(region{kind: RegionStack, buf: buf, tags: make([]uint32, stackSize/8)})
}

// run executes from the entry until the entry function exits.
func (m *machine) run() error {
	code := m.it.code
	limit := m.it.opts.MaxInsns
	pc := 0
	for {
		if pc < 0 || pc >= len(code) {
			return fmt.Errorf("control reached instruction %d, outside the program", pc)
		}
		if len(m.path) >= limit {
			return fmt.Errorf("%s: more than %d instructions executed (endless loop?)", where(m.it.prog, pc), limit)
		}
		m.pc = pc
		m.path = append(m.path, int32(pc))
		in := &code[pc]
		switch in.cls {
		case asm.ALU64Class:
			if err := m.alu(in, 64); err != nil {
				return err
			}
			pc++
		case asm.ALUClass:
			if err := m.alu(in, 32); err != nil {
				return err
			}
			pc++
		case asm.JumpClass, asm.Jump32Class:
			next, done, err := m.jump(in, pc)
			if err != nil || done {
				return err
			}
			if next <= pc {
				m.loops[[2]int32{int32(pc), int32(next)}]++
			}
			pc = next
		case asm.LdXClass:
			if in.op.Mode() != asm.MemMode && in.op.Mode() != asm.MemSXMode {
				return m.unsupported(in)
			}
			v, t, err := m.load(m.tags[in.src], m.regs[in.src]+uint64(int64(in.off)), int(in.size))
			if err != nil {
				return err
			}
			if in.op.Mode() == asm.MemSXMode {
				v, t = uint64(bpfprog.SignExtend(v, int(in.size)*8)), 0
			}
			m.regs[in.dst], m.tags[in.dst] = v, t
			pc++
		case asm.StClass, asm.StXClass:
			if err := m.storeInsn(in); err != nil {
				return err
			}
			pc++
		case asm.LdClass:
			if err := m.ldImm(in); err != nil {
				return err
			}
			pc++
		default:
			return m.unsupported(in)
		}
	}
}

func (m *machine) unsupported(in *insn) error {
	return fmt.Errorf("%s: unsupported instruction %v", where(m.it.prog, m.pc), m.it.prog.Insns[m.pc])
}

func (m *machine) srcOf(in *insn) (uint64, uint32) {
	if in.op.Source() == asm.RegSource {
		return m.regs[in.src], m.tags[in.src]
	}
	return uint64(in.imm), 0
}

// alu runs an ALU64 (w = 64) or ALU (w = 32) instruction. The arithmetic
// is bpfprog.ALU's; a 64-bit add, subtraction or move carries the pointer
// tag of its operand along.
func (m *machine) alu(in *insn, w int) error {
	d := in.dst
	a, at := m.regs[d], m.tags[d]
	op := in.op.ALUOp()
	if op == asm.Swap {
		v := bswap(a, in.imm)
		if w == 32 && in.op.Endianness() != asm.BE {
			v = truncate(a, in.imm)
		}
		m.regs[d], m.tags[d] = v, 0
		return nil
	}
	b, bt := m.srcOf(in)
	var r uint64
	switch op {
	case asm.MovSX8, asm.MovSX16, asm.MovSX32:
		from := 32
		switch op {
		case asm.MovSX8:
			from = 8
		case asm.MovSX16:
			from = 16
		}
		if from >= w {
			return m.unsupported(in)
		}
		r, _ = bpfprog.ALU(asm.Mov, w, 0, uint64(bpfprog.SignExtend(b, from)))
	default:
		var ok bool
		if r, ok = bpfprog.ALU(op, w, a, b); !ok {
			return m.unsupported(in)
		}
	}
	var rt uint32
	if w == 64 {
		switch {
		case op == asm.Add && at == 0:
			rt = bt
		case op == asm.Add && bt == 0, op == asm.Sub && bt == 0:
			rt = at
		case op == asm.Mov:
			rt = bt
		}
	}
	m.regs[d], m.tags[d] = r, rt
	return nil
}

func bswap(v uint64, width int64) uint64 {
	switch width {
	case 16:
		return uint64(bits.ReverseBytes16(uint16(v)))
	case 32:
		return uint64(bits.ReverseBytes32(uint32(v)))
	}
	return bits.ReverseBytes64(v)
}

func truncate(v uint64, width int64) uint64 {
	switch width {
	case 16:
		return uint64(uint16(v))
	case 32:
		return uint64(uint32(v))
	}
	return v
}

// jump executes a jump-class instruction and returns the next pc, or done
// when the program exits.
func (m *machine) jump(in *insn, pc int) (next int, done bool, err error) {
	switch op := in.op.JumpOp(); op {
	case asm.Exit:
		n := len(m.frames)
		if n == 0 {
			return 0, true, nil
		}
		f := m.frames[n-1]
		m.frames = m.frames[:n-1]
		m.regions[f.stack].dead = true
		copy(m.regs[6:], f.saved[:])
		copy(m.tags[6:], f.tags[:])
		return f.ret, false, nil
	case asm.Call:
		if in.target >= 0 {
			if len(m.frames)+1 >= maxFrames {
				return 0, false, fmt.Errorf("%s: call depth exceeds %d frames", where(m.it.prog, pc), maxFrames)
			}
			f := frame{ret: pc + 1}
			copy(f.saved[:], m.regs[6:])
			copy(f.tags[:], m.tags[6:])
			st := m.newStack(len(m.frames) + 1)
			f.stack = st
			m.frames = append(m.frames, f)
			m.regs[10], m.tags[10] = ptr(st, stackSize), st
			return int(in.target), false, nil
		}
		if err := m.helper(asm.BuiltinFunc(in.imm)); err != nil {
			return 0, false, err
		}
		return pc + 1, false, nil
	case asm.Ja:
		return int(in.target), false, nil
	default:
		a := m.regs[in.dst]
		b, _ := m.srcOf(in)
		w := 64
		if in.cls == asm.Jump32Class {
			w = 32
		}
		if taken, _ := bpfprog.Cmp(op, w, a, b); taken {
			return int(in.target), false, nil
		}
		return pc + 1, false, nil
	}
}

// Atomic operations beyond those asm names.
const (
	atomicLoadAcq  asm.AtomicOp = 0x0001_0000
	atomicStoreRel asm.AtomicOp = 0x0001_1000
)

func (m *machine) storeInsn(in *insn) error {
	size := int(in.size)
	addr := m.regs[in.dst] + uint64(int64(in.off))
	tag := m.tags[in.dst]
	switch in.op.Mode() {
	case asm.MemMode:
		if in.cls == asm.StClass {
			return m.store(tag, addr, size, uint64(in.imm), 0)
		}
		return m.store(tag, addr, size, m.regs[in.src], m.tags[in.src])
	case asm.AtomicMode:
	default:
		return m.unsupported(in)
	}
	aop := in.op.AtomicOp()
	switch aop {
	case atomicLoadAcq:
		v, t, err := m.load(m.tags[in.src], m.regs[in.src]+uint64(int64(in.off)), size)
		m.regs[in.dst], m.tags[in.dst] = v, t
		return err
	case atomicStoreRel:
		return m.store(tag, addr, size, m.regs[in.src], m.tags[in.src])
	}
	if size != 4 && size != 8 {
		return m.unsupported(in)
	}
	b, r, _, err := m.mem(tag, addr, size, true)
	if err != nil {
		return err
	}
	m.loads[r.kind]++
	m.stores[r.kind]++
	old := get(b)
	src := m.regs[in.src]
	mask := ^uint64(0)
	if size == 4 {
		mask = 0xffffffff
	}
	switch aop {
	case asm.AddAtomic, asm.FetchAdd:
		put(b, old+src)
	case asm.OrAtomic, asm.FetchOr:
		put(b, old|src)
	case asm.AndAtomic, asm.FetchAnd:
		put(b, old&src)
	case asm.XorAtomic, asm.FetchXor:
		put(b, old^src)
	case asm.Xchg:
		put(b, src)
	case asm.CmpXchg:
		if old == m.regs[0]&mask {
			put(b, src)
		}
		m.regs[0], m.tags[0] = old, 0
		return nil
	default:
		return m.unsupported(in)
	}
	if aop == asm.FetchAdd || aop == asm.FetchOr || aop == asm.FetchAnd || aop == asm.FetchXor || aop == asm.Xchg {
		m.regs[in.src], m.tags[in.src] = old, 0
	}
	return nil
}

// ldImm executes LD_IMM64: a constant, a map pointer or a pointer into a
// map's value (global data).
func (m *machine) ldImm(in *insn) error {
	if in.op.Mode() != asm.ImmMode {
		return fmt.Errorf("%s: LD_ABS/LD_IND are not available to XDP programs", where(m.it.prog, m.pc))
	}
	ins := m.it.prog.Insns[m.pc]
	switch {
	case in.mapIdx >= 0 && ins.Src == asm.PseudoMapValue:
		t, err := m.globalData(int(in.mapIdx))
		if err != nil {
			return err
		}
		m.regs[in.dst], m.tags[in.dst] = ptr(t, int(uint64(in.imm)>>32)), t
	case in.mapIdx >= 0:
		t := m.mapTag(int(in.mapIdx))
		m.regs[in.dst], m.tags[in.dst] = ptr(t, 0), t
	case ins.Src == 0:
		m.regs[in.dst], m.tags[in.dst] = uint64(in.imm), 0
	default:
		return fmt.Errorf("%s: unsupported 64-bit immediate load %v", where(m.it.prog, m.pc), ins)
	}
	return nil
}

func (m *machine) mapTag(idx int) uint32 {
	if m.mapTags[idx] == 0 {
		m.mapTags[idx] = m.newRegion(region{kind: RegionMap, mp: m.maps.list[idx]})
	}
	return m.mapTags[idx]
}

// globalData returns the tag of the value of key 0 of an array map, which
// is how global variables are addressed.
func (m *machine) globalData(idx int) (uint32, error) {
	if m.valTags[idx] == 0 {
		mp := m.maps.list[idx]
		if !isArrayType(mp.typ) || mp.percpu {
			return 0, fmt.Errorf("%s: direct value access into %v map %s", where(m.it.prog, m.pc), mp.typ, mp.name)
		}
		m.valTags[idx] = m.newRegion(region{kind: RegionMapValue, buf: mp.arrayValue(0, 0), mp: mp, ro: mp.frozen})
	}
	return m.valTags[idx], nil
}
