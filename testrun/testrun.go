package testrun

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"time"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/dpperf/dpperf/bpfprog"
	"github.com/dpperf/dpperf/internal/fail"
	"github.com/dpperf/dpperf/mapstate"
)

// Options set up a Runner.
type Options struct {
	// CPU is the processor every run (and every map access) is pinned to,
	// so per-CPU values and per-CPU LRU lists are those of one known CPU.
	CPU int
}

// Runner holds one loaded program and its maps.
type Runner struct {
	prog *bpfprog.Program
	p    *ebpf.Program
	maps map[string]*ebpf.Map
	opts Options
	ncpu int
	// progFlags and progAttach are the program's load flags
	// (BPF_F_XDP_HAS_FRAGS among them) and expected attach type, which a
	// program tail-calling it must share.
	progFlags  uint32
	progAttach ebpf.AttachType
	// readOnly names the maps frozen with their contents at load.
	readOnly map[string]bool
	sockets  []*xsk                     // AF_XDP sockets of XSK maps, the first holding the UMEM
	xsks     map[string]map[uint32]*xsk // by map and key
}

// Input is one packet and the receive queue it arrives on. Ifindex 0 runs
// without a context: the kernel then reports the loopback device (ifindex
// 1) and queue 0. A non-zero Ifindex must name an existing device.
type Input struct {
	Packet           []byte
	Ifindex, RxQueue uint32
}

// Result is what the kernel returned for one run.
type Result struct {
	Verdict uint32
	Packet  []byte        // data_meta to data_end after the run
	Elapsed time.Duration // the kernel's time for the run
}

// Load loads program p (from p.File) with the maps it uses, filled from s
// laid over the object's own initial contents (global data). Without root
// it returns a fail.RequirementError.
func Load(p *bpfprog.Program, s *mapstate.State, opts Options) (*Runner, error) {
	if os.Geteuid() != 0 {
		return nil, fail.Requirementf("testrun: BPF_PROG_TEST_RUN needs root (running as uid %d)", os.Geteuid())
	}
	if s == nil {
		s = mapstate.New()
	}
	if err := s.Validate(p, "map state"); err != nil {
		return nil, err
	}
	full, err := bpfprog.SpecFile(p)
	if err != nil {
		return nil, err
	}
	return LoadSpec(full, p, s, opts)
}

// LoadSpec is Load for an object already parsed (or assembled in Go): full
// holds program p.Name and its maps.
func LoadSpec(full *ebpf.CollectionSpec, p *bpfprog.Program, s *mapstate.State, opts Options) (*Runner, error) {
	if os.Geteuid() != 0 {
		return nil, fail.Requirementf("testrun: BPF_PROG_TEST_RUN needs root (running as uid %d)", os.Geteuid())
	}
	if s == nil {
		s = mapstate.New()
	}
	ps := full.Programs[p.Name]
	if ps == nil {
		return nil, fail.Inputf(p.File, "no program %s", p.Name)
	}
	init := mapstate.Overlay(mapstate.FromSpec(full, p), s)
	spec := &ebpf.CollectionSpec{
		Programs:  map[string]*ebpf.ProgramSpec{p.Name: typed(ps, p.Type)},
		Maps:      map[string]*ebpf.MapSpec{},
		Types:     full.Types,
		ByteOrder: full.ByteOrder,
	}
	for name := range p.Maps {
		ms := full.Maps[name].Copy()
		ms.Contents = nil
		ms.Pinning = ebpf.PinNone // never touch maps pinned by other loaders
		if readOnly(ms) {
			// Read-only global data is frozen at creation: give it its
			// contents now; every other map is filled after loading.
			for _, e := range entriesOf(init, name) {
				ms.Contents = append(ms.Contents, ebpf.MapKV{Key: []byte(e.Key), Value: []byte(e.Value)})
			}
		}
		spec.Maps[name] = ms
	}
	ncpu, err := ebpf.PossibleCPU()
	if err != nil {
		return nil, err
	}
	r := &Runner{prog: p, opts: opts, ncpu: ncpu, progFlags: ps.Flags, progAttach: ps.AttachType, readOnly: map[string]bool{}}
	for name, ms := range spec.Maps {
		r.readOnly[name] = readOnly(ms)
	}
	err = r.pinned(func() error {
		coll, err := ebpf.NewCollectionWithOptions(spec, ebpf.CollectionOptions{})
		if err != nil {
			return fmt.Errorf("load %s from %s: %w", p.Name, p.File, err)
		}
		r.p, r.maps = coll.Programs[p.Name], coll.Maps
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := r.fill(init); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// typed copies ps with type t when its section names none (a .text entry
// or iproute2's "prog" section, read as t).
func typed(ps *ebpf.ProgramSpec, t ebpf.ProgramType) *ebpf.ProgramSpec {
	cp := ps.Copy()
	if cp.Type == ebpf.UnspecifiedProgram {
		cp.Type = t
	}
	return cp
}

func entriesOf(s *mapstate.State, name string) []mapstate.Entry {
	if m := s.Maps[name]; m != nil {
		return m.Entries
	}
	return nil
}

// Program returns the kernel program (for its id in leak checks).
func (r *Runner) Program() *ebpf.Program { return r.p }

// NumCPU is the number of possible CPUs: the values per-CPU maps hold.
func (r *Runner) NumCPU() int { return r.ncpu }

// Close releases the program and its maps.
func (r *Runner) Close() error {
	var errs []error
	if r.p != nil {
		errs = append(errs, r.p.Close())
	}
	for _, m := range r.maps {
		errs = append(errs, m.Close())
	}
	for _, x := range r.sockets {
		errs = append(errs, x.close())
	}
	r.p, r.maps, r.sockets, r.xsks = nil, nil, nil, nil
	return errors.Join(errs...)
}

// pinned runs f on a thread pinned to the runner's CPU.
func (r *Runner) pinned(f func() error) error {
	unpin, err := Pin(r.opts.CPU)
	if err != nil {
		return err
	}
	defer unpin()
	return f()
}

// Pin locks the calling goroutine to its thread and the thread to one CPU,
// so that timed runs do not migrate; unpin restores the affinity and
// unlocks the thread.
func Pin(cpu int) (unpin func(), err error) {
	runtime.LockOSThread()
	var old unix.CPUSet
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		runtime.UnlockOSThread()
		return nil, fmt.Errorf("get CPU affinity: %w", err)
	}
	var set unix.CPUSet
	set.Set(cpu)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		runtime.UnlockOSThread()
		return nil, fmt.Errorf("pin to CPU %d: %w", cpu, err)
	}
	return func() {
		unix.SchedSetaffinity(0, &old)
		runtime.UnlockOSThread()
	}, nil
}

// xdpMD is struct xdp_md as BPF_PROG_TEST_RUN takes it.
type xdpMD struct {
	Data, DataEnd, DataMeta, IngressIfindex, RxQueueIndex, EgressIfindex uint32
}

func (r *Runner) options(in Input, out []byte, repeat int) *ebpf.RunOptions {
	o := &ebpf.RunOptions{Data: in.Packet, DataOut: out, Repeat: uint32(repeat)}
	if in.Ifindex != 0 {
		o.Context = xdpMD{DataEnd: uint32(len(in.Packet)), IngressIfindex: in.Ifindex, RxQueueIndex: in.RxQueue}
	}
	return o
}

// Run runs the program once on in.
func (r *Runner) Run(in Input) (*Result, error) {
	out := make([]byte, 4096)
	var res Result
	err := r.pinned(func() error {
		o := r.options(in, out, 1)
		start := time.Now()
		ret, err := r.p.Run(o)
		if err != nil {
			return fmt.Errorf("BPF_PROG_TEST_RUN %s: %w", r.prog.Name, err)
		}
		res = Result{Verdict: ret, Packet: slices.Clone(o.DataOut), Elapsed: time.Since(start)}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &res, nil
}

// Time runs the program repeat times on in.Packet inside one
// BPF_PROG_TEST_RUN and returns the kernel's mean time per run and the last
// verdict. It runs without a context (the loopback device, queue 0). The
// runs change the maps as repeat single runs would; Fill starts again.
func (r *Runner) Time(in Input, repeat int) (time.Duration, uint32, error) {
	var d time.Duration
	var ret uint32
	err := r.pinned(func() error {
		var err error
		ret, d, err = r.p.Benchmark(in.Packet, repeat, nil)
		return err
	})
	if err != nil {
		return 0, 0, fmt.Errorf("BPF_PROG_TEST_RUN %s: %w", r.prog.Name, err)
	}
	return d, ret, nil
}

// readOnly reports maps programs cannot write (BPF_F_RDONLY_PROG: .rodata).
func readOnly(ms *ebpf.MapSpec) bool { return ms.Flags&unix.BPF_F_RDONLY_PROG != 0 }
