package interp

import (
	"fmt"
	"slices"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/dpperf/dpperf/bpfprog"
)

// Frame geometry of an XDP buffer under BPF_PROG_TEST_RUN: a page holding
// the headroom, the packet, and the skb_shared_info tailroom.
const (
	FrameSize  = 4096
	Headroom   = 256 // XDP_PACKET_HEADROOM
	Tailroom   = 320 // SKB_DATA_ALIGN(sizeof(struct skb_shared_info))
	MaxPacket  = FrameSize - Headroom - Tailroom
	MinPacket  = 14  // ETH_HLEN
	xdpFrame   = 40  // sizeof(struct xdp_frame), kept free at the frame start
	maxMeta    = 255 // largest metadata area: skb_shared_info.meta_len is a u8
	stackSize  = 512
	maxFrames  = 8 // MAX_CALL_FRAMES
	ctxSize    = 24
	defaultMax = 1 << 20
)

// Options set the environment of runs.
type Options struct {
	// CPU is the processor the program runs on: what
	// bpf_get_smp_processor_id returns and which per-CPU values it sees.
	CPU int
	// Clock is the first value bpf_ktime_get_ns returns; each further call
	// returns ClockStep more (default 1000 ns). The clock continues across
	// runs of one Interp.
	Clock, ClockStep uint64
	// Seed seeds bpf_get_prandom_u32.
	Seed uint64
	// MaxInsns stops a run after this many instructions (default 2^20, the
	// verifier's limit on processed instructions).
	MaxInsns int
}

// Input is what an XDP program receives.
type Input struct {
	Packet []byte
	// Ifindex is the ingress device (xdp_md.ingress_ifindex); 0 means the
	// loopback device, ifindex 1, as under BPF_PROG_TEST_RUN without a
	// context. RxQueue is xdp_md.rx_queue_index.
	Ifindex, RxQueue uint32
}

// Interp runs one program. It is not safe for concurrent use: give each
// goroutine its own (New is cheap).
type Interp struct {
	prog  *bpfprog.Program
	opts  Options
	code  []insn
	maps  []string // map names by index, sorted
	clock uint64
	rng   uint64
	m     machine
}

// insn is a decoded instruction.
type insn struct {
	op       asm.OpCode
	cls      asm.Class
	dst, src uint8
	off      int16
	imm      int64
	target   int32 // jump target or callee entry; -1 if none
	mapIdx   int32 // LD_IMM64 of a map pointer or value: map index; else -1
	size     uint8 // memory access size in bytes
}

// New decodes p for interpretation. It fails on instructions the
// interpreter cannot run at all (unknown opcodes, jumps out of their
// function, calls to unknown functions); helpers are checked when called.
func New(p *bpfprog.Program, opts Options) (*Interp, error) {
	if p.Type != ebpf.XDP {
		return nil, fmt.Errorf("program %s is of type %v; the interpreter runs XDP programs", p.Name, p.Type)
	}
	if opts.ClockStep == 0 {
		opts.ClockStep = 1000
	}
	if opts.Clock == 0 {
		opts.Clock = 1_000_000_000
	}
	if opts.MaxInsns <= 0 {
		opts.MaxInsns = defaultMax
	}
	it := &Interp{prog: p, opts: opts, clock: opts.Clock, rng: opts.Seed ^ 0x9e3779b97f4a7c15}
	for name := range p.Maps {
		it.maps = append(it.maps, name)
	}
	slices.Sort(it.maps)
	it.code = make([]insn, len(p.Insns))
	for i, ins := range p.Insns {
		d := insn{op: ins.OpCode, cls: ins.OpCode.Class(), dst: uint8(ins.Dst), src: uint8(ins.Src),
			off: ins.Offset, imm: ins.Constant, target: -1, mapIdx: -1}
		if ins.Dst > asm.R10 || ins.Src > asm.R10 {
			return nil, fmt.Errorf("%s: invalid register in %v", where(p, i), ins)
		}
		if sz := ins.OpCode.Size(); sz != asm.InvalidSize {
			d.size = uint8(sz.Sizeof())
		}
		switch {
		case d.cls.IsJump():
			switch op := ins.OpCode.JumpOp(); {
			case op == asm.Exit:
			case op == asm.Call && ins.IsFunctionCall():
				fi := p.FuncByName(ins.Reference())
				if fi < 0 {
					return nil, fmt.Errorf("%s: call to unknown function %q", where(p, i), ins.Reference())
				}
				d.target = int32(p.Funcs[fi].Start)
			case op == asm.Call:
				if !ins.IsBuiltinCall() {
					return nil, fmt.Errorf("%s: unsupported call %v (kfuncs and indirect calls are not modelled)", where(p, i), ins)
				}
			case op == asm.InvalidJumpOp || op == asm.JCOND:
				return nil, fmt.Errorf("%s: unsupported instruction %v", where(p, i), ins)
			default:
				t, _, ok := p.JumpTarget(i)
				if !ok || p.FuncOf(t) != p.FuncOf(i) {
					return nil, fmt.Errorf("%s: jump target outside the function", where(p, i))
				}
				d.target = int32(t)
			}
		case d.cls == asm.LdClass && ins.OpCode.Mode() == asm.ImmMode && ins.IsLoadFromMap():
			idx, ok := slices.BinarySearch(it.maps, ins.Reference())
			if !ok {
				return nil, fmt.Errorf("%s: unknown map %q", where(p, i), ins.Reference())
			}
			d.mapIdx = int32(idx)
		}
		it.code[i] = d
	}
	return it, nil
}

// Program returns the program the interpreter runs.
func (it *Interp) Program() *bpfprog.Program { return it.prog }

// where names instruction i for error messages.
func where(p *bpfprog.Program, i int) string {
	if loc, _ := p.Line(i); loc != "" {
		return fmt.Sprintf("instruction %d (%s)", i, loc)
	}
	return fmt.Sprintf("instruction %d", i)
}

// Repeats runs in up to n times (at least once) as the repeats of one
// BPF_PROG_TEST_RUN do: maps carry their state from one run to the next,
// and so does the packet (the kernel runs every repeat on the buffer the
// run before left: a program that marks a query as answered meets the
// mark on its second run). visit sees each run's result in order; the
// repeats stop when it returns false. complete is false when they ended
// early on a packet of a length no run can take.
func (it *Interp) Repeats(in Input, maps *Maps, n int, visit func(*Result) bool) (complete bool, err error) {
	n = max(n, 1)
	for k := 0; k < n; k++ {
		res, err := it.Run(in, maps)
		if err != nil {
			return false, err
		}
		if !visit(res) || k == n-1 {
			break
		}
		in.Packet = res.Packet[res.Meta:]
		if len(in.Packet) < MinPacket || len(in.Packet) > MaxPacket {
			return false, nil
		}
	}
	return true, nil
}

// Repeat runs in n times as Repeats does. It returns the first run's
// result and whether every run executed the first one's instructions
// without reading the clock or random numbers: whether repeats time that
// one path.
func (it *Interp) Repeat(in Input, maps *Maps, n int) (*Result, bool, error) {
	var first *Result
	same := false
	complete, err := it.Repeats(in, maps, n, func(res *Result) bool {
		if first == nil {
			first, same = res, !res.Nondeterministic
		} else {
			same = !res.Nondeterministic && slices.Equal(res.Path, first.Path)
		}
		return same
	})
	if err != nil {
		return nil, false, err
	}
	return first, same && complete, nil
}

// Run runs the program on in with maps, which the run mutates. The error
// names the instruction at fault; a run that errs has no result.
func (it *Interp) Run(in Input, maps *Maps) (*Result, error) {
	if len(in.Packet) < MinPacket || len(in.Packet) > MaxPacket {
		return nil, fmt.Errorf("packet of %d bytes: XDP runs take %d to %d bytes", len(in.Packet), MinPacket, MaxPacket)
	}
	if !slices.Equal(maps.names, it.maps) {
		return nil, fmt.Errorf("maps %v do not belong to program %s (maps %v)", maps.names, it.prog.Name, it.maps)
	}
	if it.opts.CPU < 0 || it.opts.CPU >= maps.ncpu {
		return nil, fmt.Errorf("CPU %d outside the maps' %d CPUs", it.opts.CPU, maps.ncpu)
	}
	m := &it.m
	m.reset(it, maps, in)
	if err := m.run(); err != nil {
		return nil, err
	}
	return m.result(), nil
}
