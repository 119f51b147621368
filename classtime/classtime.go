package classtime

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/dpperf/dpperf/bpfprog"
	"github.com/dpperf/dpperf/interp"
	"github.com/dpperf/dpperf/mapstate"
	"github.com/dpperf/dpperf/replay"
	"github.com/dpperf/dpperf/replay/dist"
	"github.com/dpperf/dpperf/testrun"
)

// Sample is one packet to time, with the map state it meets.
type Sample struct {
	Class  string
	Packet []byte
	// Ifindex and RxQueue are the receiving device and queue (0: none).
	Ifindex, RxQueue uint32
	State            *mapstate.State
	// Verdict is what the interpreter returned; every kernel run must
	// return it too.
	Verdict uint32
}

// FromReps turns replay's representatives into samples.
func FromReps(reps []replay.Rep) []Sample {
	out := make([]Sample, len(reps))
	for i, r := range reps {
		out[i] = Sample{Class: r.Class, Packet: r.Packet, State: r.State, Verdict: r.Result.Verdict}
	}
	return out
}

// Options set up a Meter.
type Options struct {
	CPU int // processor every run is pinned to
	// Runs is the number of single runs per sample (default 100).
	Runs int
	// Repeat is the repeat count of the cross-check of path-stable
	// packets (default 1000; negative disables it).
	Repeat int
	// Warm restores, between the runs of a sample, only the entries a run
	// changed (testrun.Undo) instead of refilling every map, so each run
	// meets the caches its previous run left, as a packet of a stream
	// does. A sample's first run is untimed and tells what to undo.
	Warm bool
}

// Class is what one class measured, in nanoseconds.
type Class struct {
	Name    string
	Samples int // representatives timed
	Runs    int // single runs over all of them
	// Single runs after restoring the state, harness overhead included.
	Min, P10, Median, P90 float64
	// Net is Median minus Report.Overhead.
	Net float64
	// Stable says whether every sample of the class takes one path when
	// repeated from its state (per the interpreter); RepeatNs is then the
	// median over the samples of the mean time per run of Repeat runs in
	// one BPF_PROG_TEST_RUN, else NaN.
	Stable   bool
	RepeatNs float64
}

// Report is the measurement of all classes.
type Report struct {
	// Overhead is the median single-run time of an empty XDP program,
	// timed just before every timed run of every sample.
	Overhead float64
	Classes  []Class // in the order classes first appear in the samples
}

// Meter holds the program and an empty baseline program in the kernel.
type Meter struct {
	prog     *bpfprog.Program
	opts     Options
	run      *testrun.Runner
	baseline *testrun.Runner
}

// Open loads p and the baseline program. Without root it returns a
// fail.RequirementError.
func Open(p *bpfprog.Program, opts Options) (*Meter, error) {
	if opts.Runs <= 0 {
		opts.Runs = 100
	}
	if opts.Repeat == 0 {
		opts.Repeat = 1000
	}
	run, err := testrun.Load(p, nil, testrun.Options{CPU: opts.CPU})
	if err != nil {
		return nil, err
	}
	insns := asm.Instructions{asm.Mov.Imm(asm.R0, 2), asm.Return()}
	insns[0] = insns[0].WithSymbol("baseline")
	bp, err := bpfprog.New("baseline", ebpf.XDP, insns, nil)
	if err != nil {
		run.Close()
		return nil, err
	}
	spec := &ebpf.CollectionSpec{Programs: map[string]*ebpf.ProgramSpec{"baseline": {
		Name: "baseline", Type: ebpf.XDP, Instructions: insns, License: "GPL"}}, Maps: map[string]*ebpf.MapSpec{}}
	base, err := testrun.LoadSpec(spec, bp, nil, testrun.Options{CPU: opts.CPU})
	if err != nil {
		run.Close()
		return nil, fmt.Errorf("load baseline program: %w", err)
	}
	return &Meter{prog: p, opts: opts, run: run, baseline: base}, nil
}

// BaselineRepeat is the empty program's time per run over n runs in one
// BPF_PROG_TEST_RUN: the per-packet cost a repeated figure includes.
func (m *Meter) BaselineRepeat(n int) (float64, error) {
	d, _, err := m.baseline.Time(testrun.Input{Packet: make([]byte, 64)}, n)
	return float64(d.Nanoseconds()), err
}

// Programs returns the kernel programs the meter loaded (for leak checks).
func (m *Meter) Programs() []*ebpf.Program {
	return []*ebpf.Program{m.run.Program(), m.baseline.Program()}
}

// Close releases both programs and the maps.
func (m *Meter) Close() error {
	return errors.Join(m.run.Close(), m.baseline.Close())
}

// Measure times every sample Runs times (see the package comment) and
// summarises by class. It stops when ctx is done.
func (m *Meter) Measure(ctx context.Context, samples []Sample) (*Report, error) {
	if len(samples) == 0 {
		return nil, fmt.Errorf("classtime: no samples")
	}
	samples = slices.Clone(samples)
	for i, s := range samples {
		if s.State == nil {
			s.State = mapstate.New()
		}
		if err := s.State.Validate(m.prog, fmt.Sprintf("sample %d state", i)); err != nil {
			return nil, err
		}
		// Per-CPU values the same on every CPU become one value, so a
		// state from a replay with another CPU count fills the kernel's.
		samples[i].State = s.State.Canonical(m.prog)
	}
	times := make([][]float64, len(samples))
	var base []float64
	rs := m.restorers(samples)
	for round := 0; round < m.opts.Runs; round++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		for i, s := range samples {
			in := testrun.Input{Packet: s.Packet, Ifindex: s.Ifindex, RxQueue: s.RxQueue}
			if err := rs.before(i); err != nil {
				return nil, fmt.Errorf("sample %d: %w", i, err)
			}
			// The baseline runs in the same conditions, just before.
			b, _, err := m.baseline.Time(in, 1)
			if err != nil {
				return nil, fmt.Errorf("baseline: %w", err)
			}
			d, verdict, err := m.run.Time(in, 1)
			if err != nil {
				return nil, fmt.Errorf("sample %d: %w", i, err)
			}
			if verdict != s.Verdict {
				return nil, fmt.Errorf("sample %d (class %s): kernel verdict %s, interpreter %s",
					i, s.Class, replay.Verdict(verdict), replay.Verdict(s.Verdict))
			}
			times[i] = append(times[i], float64(d.Nanoseconds()))
			base = append(base, float64(b.Nanoseconds()))
			if err := rs.after(i); err != nil {
				return nil, fmt.Errorf("sample %d: %w", i, err)
			}
		}
	}
	if err := rs.check(); err != nil {
		return nil, err
	}
	rep := &Report{}
	rep.Overhead, _ = dist.Percentile(base, 50)
	byClass := map[string]int{}
	pooled := [][]float64{}
	repeats := [][]float64{}
	for i, s := range samples {
		ci, ok := byClass[s.Class]
		if !ok {
			ci = len(rep.Classes)
			byClass[s.Class] = ci
			rep.Classes = append(rep.Classes, Class{Name: s.Class, Stable: true})
			pooled, repeats = append(pooled, nil), append(repeats, nil)
		}
		c := &rep.Classes[ci]
		c.Samples++
		pooled[ci] = append(pooled[ci], times[i]...)
		if !c.Stable || m.opts.Repeat < 0 {
			c.Stable = false
			continue
		}
		stable, err := m.stable(s)
		if err != nil {
			return nil, fmt.Errorf("sample %d: %w", i, err)
		}
		if !stable {
			c.Stable = false
			continue
		}
		if err := m.run.Fill(s.State); err != nil {
			return nil, err
		}
		d, _, err := m.run.Time(testrun.Input{Packet: s.Packet, Ifindex: s.Ifindex, RxQueue: s.RxQueue}, m.opts.Repeat)
		if err != nil {
			return nil, err
		}
		repeats[ci] = append(repeats[ci], float64(d)/float64(time.Nanosecond))
	}
	for ci := range rep.Classes {
		c := &rep.Classes[ci]
		ts := pooled[ci]
		c.Runs = len(ts)
		c.Min = slices.Min(ts)
		c.P10, _ = dist.Percentile(ts, 10)
		c.Median, _ = dist.Percentile(ts, 50)
		c.P90, _ = dist.Percentile(ts, 90)
		c.Net = c.Median - rep.Overhead
		c.RepeatNs = math.NaN()
		if c.Stable && len(repeats[ci]) > 0 {
			c.RepeatNs, _ = dist.Percentile(repeats[ci], 50)
		}
	}
	return rep, nil
}

// stable runs s in the interpreter Repeat times (at most 16) from its
// state and reports whether every run executes the same instructions.
func (m *Meter) stable(s Sample) (bool, error) {
	maps, err := interp.NewMaps(m.prog, s.State, interp.MapOptions{NumCPU: m.run.NumCPU()})
	if err != nil {
		return false, err
	}
	it, err := interp.New(m.prog, interp.Options{CPU: m.opts.CPU})
	if err != nil {
		return false, err
	}
	_, same, err := it.Repeat(interp.Input{Packet: s.Packet, Ifindex: s.Ifindex, RxQueue: s.RxQueue}, maps, min(m.opts.Repeat, 16))
	return same, err
}
