package testrun

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
)

// A Stream times a program on a stream of distinct packets inside one
// BPF_PROG_TEST_RUN: every repeat rewrites the example packet (undoing
// any head adjustment the run before made), stores a 16-bit counter,
// big-endian, added to the example's two bytes at Offset, and tail-calls
// the program. Repeat k therefore sees the example with k added to those
// bytes: a new flow on every run when they feed a flow key, as a data
// plane meets under a flood of new flows, with the program and its maps
// warm as they are when it runs back to back, not cold as a single run
// after a restore finds them.
//
// The front end costs what it costs; a second front end, identical but
// tail-calling an empty program, times that cost, which Time subtracts.
type Stream struct {
	r       *Runner
	packet  []byte
	offset  int
	front   *ebpf.Program // tail-calls the program
	base    *ebpf.Program // the same, tail-calling the empty program
	empty   *ebpf.Program
	maps    []*ebpf.Map
	counter *ebpf.Map
}

// StreamMax is the most repeats a stream can take: the counter is 16 bits.
const StreamMax = 1 << 16

// Stream prepares a stream of packet with the counter at offset (two
// bytes inside the packet). Close releases it.
func (r *Runner) Stream(packet []byte, offset int) (*Stream, error) {
	if offset < 0 || offset+2 > len(packet) {
		return nil, fmt.Errorf("stream: counter at byte %d outside a %d-byte packet", offset, len(packet))
	}
	if r.prog.Type != ebpf.XDP {
		return nil, fmt.Errorf("stream: %s is a %s program; streams run XDP programs", r.prog.Name, r.prog.Type)
	}
	s := &Stream{r: r, packet: append([]byte(nil), packet...), offset: offset}
	err := r.pinned(func() error {
		var err error
		if s.counter, err = ebpf.NewMap(&ebpf.MapSpec{Name: "stream_count", Type: ebpf.Array, KeySize: 4, ValueSize: 8, MaxEntries: 1}); err != nil {
			return fmt.Errorf("stream counter: %w", err)
		}
		s.maps = append(s.maps, s.counter)
		empty := asm.Instructions{asm.Mov.Imm(asm.R0, 2), asm.Return()}
		if s.empty, err = ebpf.NewProgram(&ebpf.ProgramSpec{Name: "stream_empty", Type: ebpf.XDP, Flags: r.progFlags, AttachType: r.progAttach, Instructions: empty, License: "GPL"}); err != nil {
			return fmt.Errorf("stream: empty program: %w", err)
		}
		if s.front, err = s.frontEnd(r.p); err != nil {
			return err
		}
		s.base, err = s.frontEnd(s.empty)
		return err
	})
	if err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// frontEnd loads a front end that tail-calls target.
func (s *Stream) frontEnd(target *ebpf.Program) (*ebpf.Program, error) {
	progs, err := ebpf.NewMap(&ebpf.MapSpec{Name: "stream_progs", Type: ebpf.ProgramArray, KeySize: 4, ValueSize: 4, MaxEntries: 1})
	if err != nil {
		return nil, fmt.Errorf("stream program array: %w", err)
	}
	s.maps = append(s.maps, progs)
	insns := frontEndInsns(s.packet, s.offset)
	for i := range insns {
		var err error
		switch insns[i].Reference() {
		case "progs":
			err = insns[i].AssociateMap(progs)
		case "counter":
			err = insns[i].AssociateMap(s.counter)
		}
		if err != nil {
			return nil, err
		}
	}
	p, err := ebpf.NewProgram(&ebpf.ProgramSpec{Name: "stream_front", Type: ebpf.XDP, Flags: s.r.progFlags, AttachType: s.r.progAttach, Instructions: insns, License: "GPL"})
	if err != nil {
		return nil, fmt.Errorf("stream: front end: %w", err)
	}
	if err := progs.Put(uint32(0), target); err != nil {
		p.Close()
		return nil, fmt.Errorf("stream: %s cannot be tail-called: %w", s.r.prog.Name, err)
	}
	return p, nil
}

// frontEndInsns rewrites the packet, stores the counter and tail-calls
// entry 0 of "progs"; it returns XDP_ABORTED when any step fails.
func frontEndInsns(packet []byte, offset int) asm.Instructions {
	n := int32(len(packet))
	insns := asm.Instructions{
		asm.Mov.Reg(asm.R6, asm.R1),
		// Undo what the last run did to the head: move data back to
		// len(packet) bytes before data_end.
		asm.LoadMem(asm.R2, asm.R6, 0, asm.Word),
		asm.LoadMem(asm.R3, asm.R6, 4, asm.Word),
		asm.Sub.Reg(asm.R3, asm.R2),
		asm.Sub.Imm(asm.R3, n),
		asm.JEq.Imm(asm.R3, 0, "fresh"),
		asm.Mov.Reg(asm.R1, asm.R6),
		asm.Mov.Reg(asm.R2, asm.R3),
		asm.FnXdpAdjustHead.Call(),
		asm.JNE.Imm(asm.R0, 0, "out"),
		asm.LoadMem(asm.R9, asm.R6, 0, asm.Word).WithSymbol("fresh"),
		asm.LoadMem(asm.R3, asm.R6, 4, asm.Word),
		asm.Mov.Reg(asm.R4, asm.R9),
		asm.Add.Imm(asm.R4, n),
		asm.JGT.Reg(asm.R4, asm.R3, "out"),
	}
	// The example's bytes, eight at a time, then the tail.
	off := 0
	for ; off+8 <= len(packet); off += 8 {
		insns = append(insns,
			asm.LoadImm(asm.R5, int64(binary.LittleEndian.Uint64(packet[off:])), asm.DWord),
			asm.StoreMem(asm.R9, int16(off), asm.R5, asm.DWord))
	}
	for _, w := range []struct {
		n    int
		size asm.Size
	}{{4, asm.Word}, {2, asm.Half}, {1, asm.Byte}} {
		if off+w.n <= len(packet) {
			var v uint32
			for i := range w.n {
				v |= uint32(packet[off+i]) << (8 * i)
			}
			insns = append(insns, asm.StoreImm(asm.R9, int16(off), int64(int32(v)), w.size))
			off += w.n
		}
	}
	orig := int32(binary.BigEndian.Uint16(packet[offset:]))
	insns = append(insns,
		// count = counter[0]++
		asm.StoreImm(asm.RFP, -4, 0, asm.Word),
		asm.LoadMapPtr(asm.R1, 0).WithReference("counter"),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, -4),
		asm.FnMapLookupElem.Call(),
		asm.JEq.Imm(asm.R0, 0, "out"),
		asm.LoadMem(asm.R7, asm.R0, 0, asm.DWord),
		asm.Mov.Reg(asm.R8, asm.R7),
		asm.Add.Imm(asm.R8, 1),
		asm.StoreMem(asm.R0, 0, asm.R8, asm.DWord),
		// packet[offset:offset+2] = big-endian(example's + count)
		asm.Add.Imm(asm.R7, orig),
		asm.HostTo(asm.BE, asm.R7, asm.Half),
		asm.StoreMem(asm.R9, int16(offset), asm.R7, asm.Half),
		asm.Mov.Reg(asm.R1, asm.R6),
		asm.LoadMapPtr(asm.R2, 0).WithReference("progs"),
		asm.Mov.Imm(asm.R3, 0),
		asm.FnTailCall.Call(),
		asm.Mov.Imm(asm.R0, 0).WithSymbol("out"),
		asm.Return(),
	)
	return insns
}

// Time runs the stream n times from the maps' current state and returns
// the program's time per run: the front end's mean less the mean of the
// front end tail-calling the empty program, plus the empty program's own
// mean when repeated (the per-run cost every repeated figure includes),
// so that it compares with repeated timings. verdict is the last run's.
func (s *Stream) Time(n int) (ns float64, verdict uint32, err error) {
	if n < 1 || n > StreamMax {
		return 0, 0, fmt.Errorf("stream: %d runs (1 to %d)", n, StreamMax)
	}
	var prog, base, empty time.Duration
	err = s.r.pinned(func() error {
		if err := s.counter.Put(uint32(0), uint64(0)); err != nil {
			return err
		}
		var err error
		if verdict, prog, err = s.front.Benchmark(s.packet, n, nil); err != nil {
			return fmt.Errorf("BPF_PROG_TEST_RUN stream of %s: %w", s.r.prog.Name, err)
		}
		if err := s.counter.Put(uint32(0), uint64(0)); err != nil {
			return err
		}
		if _, base, err = s.base.Benchmark(s.packet, n, nil); err != nil {
			return fmt.Errorf("BPF_PROG_TEST_RUN stream baseline: %w", err)
		}
		if _, empty, err = s.empty.Benchmark(s.packet, n, nil); err != nil {
			return fmt.Errorf("BPF_PROG_TEST_RUN empty program: %w", err)
		}
		return nil
	})
	if err != nil {
		return 0, 0, err
	}
	return float64(prog-base+empty) / float64(time.Nanosecond), verdict, nil
}

// Close releases the front ends, the empty program and the stream's maps.
func (s *Stream) Close() error {
	var errs []error
	for _, p := range []*ebpf.Program{s.front, s.base, s.empty} {
		if p != nil {
			errs = append(errs, p.Close())
		}
	}
	for _, m := range s.maps {
		errs = append(errs, m.Close())
	}
	s.front, s.base, s.empty, s.maps = nil, nil, nil, nil
	return errors.Join(errs...)
}
