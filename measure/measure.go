// Package measure replays the example packets of a bound analysis on the
// kernel with BPF_PROG_TEST_RUN: it loads the program with the maps the
// solver asked for, checks that the packet takes the predicted path (the
// concrete interpreter, itself checked against the kernel, reports the
// path; the kernel reports the verdict), and times it (the median of five
// timings). Examples whose repeats leave their path (a stateful program's
// second packet meets the state the first one left) are also timed in
// single runs from a restored state, through package classtime.
package measure

import (
	"context"
	"fmt"
	"slices"

	"github.com/cilium/ebpf"

	"github.com/dpperf/dpperf/bound"
	"github.com/dpperf/dpperf/bpfprog"
	"github.com/dpperf/dpperf/calibrate"
	"github.com/dpperf/dpperf/cfg"
	"github.com/dpperf/dpperf/classtime"
	"github.com/dpperf/dpperf/interp"
	"github.com/dpperf/dpperf/mapstate"
	"github.com/dpperf/dpperf/stats"
	"github.com/dpperf/dpperf/symex"
	"github.com/dpperf/dpperf/testrun"
)

// replayCPU is the CPU the replays run on (testrun's default).
var replayCPU = testrun.Options{}.CPU

// Repeat is how many runs one timing takes.
const Repeat = 200000

// Timings is how many timings an example gets; their median is reported
// (odd, so that the median is one of them).
const Timings = 5

// SingleRuns is how many single runs time an example that changes its own
// state (bound.Measured.Stateful).
const SingleRuns = 301

// repeatCheck is how many times the interpreter repeats an example to see
// whether its repeats stay on its path.
const repeatCheck = 16

// Paths measures every path of r that has an example packet, filling in
// PathReport.Measured: the example's verdict and time, and each path the
// replays ran held against that path's own rate under c (and under
// expected, the calibration's medians, when not nil).
func Paths(c, expected *bound.Costed, r *bound.Result) error {
	pc := pricer{g: c.G, guarantee: c, expected: expected}
	probe, err := calibrate.ProbeFor(c.T)
	if err != nil {
		return err
	}
	defer probe.Close()
	for i := range r.Paths {
		pr := &r.Paths[i]
		if pr.Example == nil {
			continue
		}
		m, err := path(pc, probe, pr, pr.Edges)
		if err != nil {
			return err
		}
		pr.Measured = m
	}
	return nil
}

// path replays one path's example; the speed probe (nil: none) is timed
// around every timing, on the CPU the replays run on, to carry it to the
// calibration's slow state.
func path(pc pricer, probe *calibrate.Probe, pr *bound.PathReport, edges []int32) (*bound.Measured, error) {
	g := pc.g
	p := g.Prog
	base, err := mapstate.ObjectDefaults(p)
	if err != nil {
		return nil, err
	}
	state, unfillable, err := exampleState(p, pr.Example)
	if err != nil {
		return nil, err
	}
	state = mapstate.Overlay(base, state)
	ifindex := pr.Example.Ifindex
	if ifindex == 1 {
		ifindex = 0 // the loopback device: no context needed
	}
	in := testrun.Input{Packet: pr.Example.Raw, Ifindex: ifindex, RxQueue: pr.Example.RxQueue}

	// The path, on the interpreter.
	// The clock the example's timestamps were solved against.
	opts := interp.Options{ClockStep: symex.ClockStep}
	if c := pr.Example.ClockNs; c != nil {
		opts.Clock = *c
	}
	it, err := interp.New(p, opts)
	if err != nil {
		return nil, err
	}
	maps, err := interp.NewMaps(p, state, interp.MapOptions{})
	if err != nil {
		return nil, err
	}
	run, stays, err := it.Repeat(interpInput(in), maps, repeatCheck)
	if err != nil {
		return nil, err
	}
	m := &bound.Measured{Repeat: Repeat, InterpVerdict: run.Verdict, Predicted: predicted(g, edges)}
	m.PathMatches = slices.Equal(run.Path, m.Predicted)
	if !m.PathMatches {
		m.Mismatch = firstDifference(g, run.Path, m.Predicted)
		if len(unfillable) > 0 {
			m.Mismatch += fmt.Sprintf("; maps %v hold devices or sockets and cannot be filled from bytes", unfillable)
		}
	}
	executed := run.Path
	m.Predicted = nil
	m.Stateful = !stays

	// The verdict and the time, on the kernel.
	runner, err := testrun.Load(p, state, testrun.Options{})
	if err != nil {
		return nil, err
	}
	defer runner.Close()
	res, err := runner.Run(in)
	if err != nil {
		return nil, err
	}
	m.KernelVerdict = res.Verdict
	m.Timings = Timings
	if m.NsPerPacket, m.SlowNs, err = timed(probe, runner, state, in); err != nil {
		return nil, err
	}
	if m.Stateful {
		if err := stateful(m, probe, runner, p, opts, state, in, executed, res.Verdict); err != nil {
			return nil, err
		}
	}
	if m.NsPerPacket > 0 {
		m.PacketRate = 1e9 / m.NsPerPacket
	}
	name := "example"
	if !m.PathMatches {
		name = "as run"
	}
	if !m.Stateful {
		ch, err := pc.check(pr, name, "repeated", executed, m.NsPerPacket, m.SlowNs)
		if err != nil {
			return nil, err
		}
		m.Checks = append(m.Checks, ch)
	} else {
		how, ns, slow := "single runs", m.SingleNs, m.SingleSlowNs
		if m.StreamRuns > 0 {
			how, ns, slow = "new flows", m.StreamNs, m.StreamSlowNs
		}
		ch, err := pc.check(pr, name, how, executed, ns, slow)
		if err != nil {
			return nil, err
		}
		m.Checks = append(m.Checks, ch)
		fresh, err := interp.NewMaps(p, state, interp.MapOptions{})
		if err != nil {
			return nil, err
		}
		rep, ok, err := settled(it, interpInput(in), fresh)
		if err != nil {
			return nil, err
		}
		if ok {
			ch, err := pc.check(pr, "repeats", "repeated", rep, m.NsPerPacket, m.SlowNs)
			if err != nil {
				return nil, err
			}
			m.Checks = append(m.Checks, ch)
		} else {
			m.Unchecked = fmt.Sprintf("the example's repeats do not settle on one path in %d runs: their timing is not held against a path", settleRuns)
		}
	}
	m.VerdictMatches = uint64(m.KernelVerdict) == pr.Example.Verdict&0xffffffff && m.KernelVerdict == m.InterpVerdict
	return m, nil
}

// timed is the median of Timings timings of Repeat runs each (the kernel's
// mean per run, ns), the state restored before each. One timing takes a
// few milliseconds, and on a shared or virtual machine now and then one
// of them meets an interrupt storm or a slower spell of the host; the
// median leaves such a timing out rather than reporting it. slow is the
// median of the timings carried to the calibration's slow state by the
// speed probe timed around each (0 without a probe).
func timed(probe *calibrate.Probe, r *testrun.Runner, state *mapstate.State, in testrun.Input) (ns, slow float64, err error) {
	var all, slows []float64
	for range Timings {
		if err := r.Fill(state); err != nil {
			return 0, 0, err
		}
		t, factor, err := probe.Around(replayCPU, func() (float64, error) {
			d, _, err := r.Time(in, Repeat)
			return float64(d.Nanoseconds()), err
		})
		if err != nil {
			return 0, 0, err
		}
		all, slows = append(all, t), append(slows, t*factor)
	}
	slices.Sort(all)
	slices.Sort(slows)
	return stats.Percentile(all, 50), stats.Percentile(slows, 50), nil
}

// stateful times a stateful example's own path: on a stream of new flows
// when the interpreter finds bytes to count on, else in single runs.
func stateful(m *bound.Measured, probe *calibrate.Probe, r *testrun.Runner, p *bpfprog.Program, opts interp.Options, state *mapstate.State, in testrun.Input, executed []int32, verdict uint32) error {
	plan, ok, err := planStream(p, opts, state, interpInput(in), executed, streamMax)
	if err != nil {
		return err
	}
	streamState := state
	if dense := denseArrays(p, state); !ok && dense != nil {
		if plan, ok, err = planStream(p, opts, dense, interpInput(in), executed, streamMax); err != nil {
			return err
		}
		streamState = dense
	}
	if ok {
		m.StreamNs, m.StreamSlowNs, m.StreamRuns, err = timeStream(probe, r, p, opts, streamState, in, executed, plan, verdict)
		if err != nil {
			return err
		}
		if m.StreamRuns > 0 {
			m.StreamOffset, m.StreamDense = plan.offset, streamState != state
			return nil
		}
	}
	// Single runs time the example in its own state, not the dense one.
	var factor float64
	m.SingleNs, factor, err = probe.Around(replayCPU, func() (float64, error) { return single(p, state, in, verdict) })
	if err != nil {
		return err
	}
	m.SingleSlowNs = m.SingleNs * factor
	m.SingleRuns = SingleRuns
	return nil
}

// interpInput is the kernel's input as the interpreter takes it.
func interpInput(in testrun.Input) interp.Input {
	return interp.Input{Packet: in.Packet, Ifindex: in.Ifindex, RxQueue: in.RxQueue}
}

// single times the example in single runs, each after restoring its
// state (package classtime), and adds the per-packet cost of an empty
// program when repeated, so the figure compares with repeated ones.
func single(p *bpfprog.Program, state *mapstate.State, in testrun.Input, verdict uint32) (float64, error) {
	ct, err := classtime.Open(p, classtime.Options{Runs: SingleRuns, Repeat: -1, Warm: true})
	if err != nil {
		return 0, err
	}
	defer ct.Close()
	rep, err := ct.Measure(context.Background(), []classtime.Sample{{Class: "example", Packet: in.Packet,
		Ifindex: in.Ifindex, RxQueue: in.RxQueue, State: state, Verdict: verdict}})
	if err != nil {
		return 0, err
	}
	base, err := ct.BaselineRepeat(Repeat)
	if err != nil {
		return 0, err
	}
	return rep.Classes[0].Net + base, nil
}

// exampleState turns the solver's map contents into a map state. Maps of
// devices and sockets cannot be filled with bytes; they are left empty and
// named.
func exampleState(p *bpfprog.Program, ex *bound.Example) (*mapstate.State, []string, error) {
	s, err := ex.State()
	if err != nil {
		return nil, nil, err
	}
	var unfillable []string
	for _, e := range ex.Maps {
		if mp := p.Maps[e.Map]; mp != nil && !e.Absent && holdsObjects(mp.Type) {
			unfillable = append(unfillable, e.Map)
			delete(s.Maps, e.Map)
		}
	}
	return s, unfillable, nil
}

// holdsObjects reports maps whose values are kernel objects (devices,
// sockets, programs) that the solver's bytes cannot name. XSK maps are not
// among them: testrun creates an AF_XDP socket for each key.
func holdsObjects(t ebpf.MapType) bool {
	switch t {
	case ebpf.DevMap, ebpf.DevMapHash, ebpf.CPUMap, ebpf.SockMap, ebpf.SockHash, ebpf.ProgramArray:
		return true
	}
	return false
}

// predicted lists the instructions a path executes.
func predicted(g *cfg.Graph, edges []int32) []int32 {
	var out []int32
	for _, e := range edges {
		first, last := g.Insns(g.Edges[e].To)
		for i := first; i <= last; i++ {
			out = append(out, int32(i))
		}
	}
	return out
}

func firstDifference(g *cfg.Graph, got, want []int32) string {
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			loc, _ := g.Prog.Line(int(got[i]))
			return fmt.Sprintf("after %d instructions the packet ran instruction %d (%s), the prediction %d", i, got[i], loc, want[i])
		}
	}
	return fmt.Sprintf("the packet ran %d instructions, the prediction %d", len(got), len(want))
}
