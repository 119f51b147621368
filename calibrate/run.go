package calibrate

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/cilium/ebpf"

	"github.com/dpperf/dpperf/internal/fail"
	"github.com/dpperf/dpperf/target"
	"github.com/dpperf/dpperf/testrun"
)

// Options set up a calibration. Zero values pick the defaults.
type Options struct {
	Runs int // interleaved runs of every measurement (default 21, quick 3)
	// Quick takes a quarter of the copies, short timings, no dependent
	// chains and only the variants that are usually the dearest: seconds,
	// for tests.
	Quick      bool
	Percentile float64 // the percentile of the runs taken as a cost (default 90)
	CPU        int     // the processor every run is pinned to
	// Progress, when set, receives one line per step.
	Progress func(msg string)
	// Loaded, when set, sees every program loaded (tests check that none
	// is left behind).
	Loaded func(*ebpf.Program)
	// only, when set, keeps the micro-programs whose ID it accepts (tests).
	only func(id string) bool
}

func (o *Options) defaults() {
	if o.Runs <= 0 {
		o.Runs = 21
		if o.Quick {
			o.Runs = 3
		}
	}
	if o.Percentile <= 0 {
		o.Percentile = 90
	}
}

// Measurement is the outcome of one micro-program.
type Measurement struct {
	Key, Variant string
	Chain        bool      // a dependent chain: latency rather than throughput
	Runs         []float64 // ns per operation, one per run, after subtracting aux
	// SlowRuns are the runs carried to the core's slow state by the speed
	// probe timed around each (speed.go): what Spread summarizes when the
	// probe was timed; Typical summarizes Runs as they came.
	SlowRuns []float64
	Spread   target.Spread
	Typical  target.Spread
	Err      error // the program did not load or run: not measured
}

// ID is Key/Variant, or Key without a variant.
func (m *Measurement) ID() string {
	if m.Variant == "" {
		return m.Key
	}
	return m.Key + "/" + m.Variant
}

// Result holds every measurement of a calibration.
type Result struct {
	Measurements []*Measurement
	Options      Options
	Date         time.Time
	Elapsed      time.Duration
}

// loaded is a bench with its two programs in the kernel.
type loaded struct {
	bn           *bench
	base, full   *ebpf.Collection
	k            int // copies the full program has beyond the base
	baseN, fullN int // repeats per timing
	raw          []float64
	speed        []float64 // the probe's time around each run (none: no probe)
	m            *Measurement
}

func (l *loaded) close() {
	for _, c := range []*ebpf.Collection{l.base, l.full} {
		if c != nil {
			c.Close()
		}
	}
}

// Run measures every micro-program. Programs that do not load on this
// kernel are reported in their Measurement's Err. It returns ctx.Err()
// when cancelled, with every program unloaded.
func Run(ctx context.Context, opts Options) (*Result, error) {
	opts.defaults()
	if os.Geteuid() != 0 {
		return nil, fail.Requirementf("calibrate: BPF_PROG_TEST_RUN needs root (running as uid %d)", os.Geteuid())
	}
	ncpu, err := ebpf.PossibleCPU()
	if err != nil {
		return nil, err
	}
	say := func(format string, args ...any) {
		if opts.Progress != nil {
			opts.Progress(fmt.Sprintf(format, args...))
		}
	}
	unpin, err := testrun.Pin(opts.CPU)
	if err != nil {
		return nil, err
	}
	defer unpin()

	start := time.Now()
	benches := append(append(append(classBenches(), memoryBenches()...), mapBenches(ncpu)...), helperBenches()...)
	benches = append(benches, pcvBenches(ncpu)...)
	var ls []*loaded
	defer func() {
		for _, l := range ls {
			l.close()
		}
	}()
	pkt := packet()
	benches = slices.DeleteFunc(benches, func(bn *bench) bool {
		return (opts.Quick && (bn.full || bn.chain)) || (opts.only != nil && !opts.only(bn.ID()))
	})
	for i, bn := range benches {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		l := &loaded{bn: bn, m: &Measurement{Key: bn.key, Variant: bn.variant, Chain: bn.chain}}
		ls = append(ls, l)
		if l.m.Err = l.load(opts); l.m.Err != nil {
			say("load %d/%d %s: not measured: %v", i+1, len(benches), bn.ID(), l.m.Err)
		} else {
			say("load %d/%d %s", i+1, len(benches), bn.ID())
		}
	}
	probe, err := NewProbe()
	if err != nil {
		say("speed probe: %v: costs are not carried to the slow state", err)
		probe = nil
	}
	defer probe.Close()
	for r := range opts.Runs {
		for _, l := range ls {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			if l.m.Err != nil {
				continue
			}
			if l.m.Err = l.time(pkt, probe); l.m.Err != nil {
				say("run %s: %v", l.bn.ID(), l.m.Err)
			}
		}
		say("run %d/%d done (%s)", r+1, opts.Runs, time.Since(start).Round(100*time.Millisecond))
	}
	res := &Result{Options: opts, Date: start, Elapsed: time.Since(start)}
	byID := map[string]*loaded{}
	for _, l := range ls {
		byID[l.bn.ID()] = l
		res.Measurements = append(res.Measurements, l.m)
	}
	speed, timed := slowState(ls, opts.Percentile)
	for _, l := range ls {
		if _, _, err := l.finish(byID, opts.Percentile, speed.High, nil); err != nil {
			l.m.Err = err
		}
		// The probe's own spread is that of every timing of it: its high
		// is the slow state the costs were carried to.
		if l.bn.key == SpeedKey && timed && l.m.Err == nil {
			speed.Variant = l.m.Spread.Variant
			l.m.Spread = speed
		}
	}
	return res, nil
}

// load assembles and loads both programs and sizes their timings.
func (l *loaded) load(opts Options) error {
	bn := l.bn
	k := bn.group.copies(opts.Quick)
	base := k / 4
	if bn.raw {
		k, base = 1, 0
	}
	l.k = k * bn.opsPerCopy()
	var err error
	if l.base, err = bn.load(base, opts); err != nil {
		return err
	}
	if !bn.raw {
		if l.full, err = bn.load(base+k, opts); err != nil {
			return err
		}
	}
	// About 2 ms (quick: 0.3 ms) of runs per timing, from a rough
	// estimate of the program's time: each BPF_PROG_TEST_RUN with repeats
	// also swaps the XDP dispatcher (some 15 ms of RCU grace periods, not
	// timed), so probing first would double the calibration's time.
	want := 2e6
	if opts.Quick {
		want = 3e5
	}
	perCopy := [...]float64{insnGroup: 0.5, memGroup: 1, helperGroup: 30}[bn.group]
	l.baseN = int(min(max(want/(20+perCopy*float64(base)), 100), 1e6))
	l.fullN = int(min(max(want/(20+perCopy*float64(base+k)), 100), 1e6))
	if bn.key == SpeedKey {
		l.baseN = speedRepeat // as the probe is timed beside replays
	}
	if bn.room > 0 {
		l.baseN, l.fullN = max(bn.room/max(base, 1), 1), max(bn.room/(base+k), 1)
	}
	return nil
}

// load loads the program with k copies and checks it (bench.pcv).
func (bn *bench) load(k int, opts Options) (*ebpf.Collection, error) {
	b := bn.build(k)
	c, err := newCollection(b.spec(bn.maps), opts)
	if err != nil || bn.pcv == nil {
		return c, err
	}
	if err := bn.pcv.check(b, c); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

func newCollection(spec *ebpf.CollectionSpec, opts Options) (*ebpf.Collection, error) {
	c, err := ebpf.NewCollectionWithOptions(spec, ebpf.CollectionOptions{})
	if err != nil {
		var ve *ebpf.VerifierError
		if errors.As(err, &ve) && len(ve.Log) > 0 {
			return nil, fmt.Errorf("%w (verifier: %s)", err, ve.Log[len(ve.Log)-1])
		}
		return nil, err
	}
	if opts.Loaded != nil {
		opts.Loaded(c.Programs["calib"])
	}
	return c, nil
}

// timeOnce is the kernel's mean time of one run, in ns.
func timeOnce(c *ebpf.Collection, pkt []byte, repeat int) (float64, error) {
	_, d, err := c.Programs["calib"].Benchmark(pkt, repeat, nil)
	if err != nil {
		return 0, err
	}
	return float64(d.Nanoseconds()), nil
}

// time takes one run: the base and the full program back to back,
// between two timings of the speed probe (nil: none); the run is taken
// again when the core changed speed during it, as Probe.Around does.
func (l *loaded) time(pkt []byte, probe *Probe) error {
	once := func() (float64, error) {
		if err := l.reset(l.base); err != nil {
			return 0, err
		}
		tb, err := timeOnce(l.base, pkt, l.baseN)
		if err != nil || l.full == nil {
			return tb, err
		}
		if err := l.reset(l.full); err != nil {
			return 0, err
		}
		tf, err := timeOnce(l.full, pkt, l.fullN)
		return PerOp(tb, tf, l.k), err
	}
	if probe == nil {
		run, err := once()
		if err == nil {
			l.raw = append(l.raw, run)
		}
		return err
	}
	run, speed, err := probe.around(once)
	if err != nil {
		return err
	}
	l.raw, l.speed = append(l.raw, run), append(l.speed, speed)
	return nil
}

// reset prepares c for a timing (bench.reset; nothing without one).
func (l *loaded) reset(c *ebpf.Collection) error {
	if l.bn.reset == nil {
		return nil
	}
	return l.bn.reset(c)
}

// finish subtracts, run by run, the measurements of the auxiliary
// instructions of a copy, carries the runs to the slow state (slow, the
// probe's time there; 0: not carried), and summarizes them. It returns the
// runs as measured and as carried. seen guards against cycles.
func (l *loaded) finish(byID map[string]*loaded, p, slow float64, seen map[string]bool) (runs, slowRuns []float64, err error) {
	if l.m.Runs != nil || l.m.Err != nil {
		return l.m.Runs, l.m.SlowRuns, l.m.Err
	}
	if seen[l.bn.ID()] {
		return nil, nil, fmt.Errorf("auxiliary measurements of %s form a cycle", l.bn.ID())
	}
	if seen == nil {
		seen = map[string]bool{}
	}
	seen[l.bn.ID()] = true
	runs = append([]float64(nil), l.raw...)
	carry := slow > 0 && len(l.speed) == len(l.raw) && l.bn.key != SpeedKey
	if carry {
		slowRuns = make([]float64, len(runs))
		for i := range runs {
			slowRuns[i] = runs[i] * slow / l.speed[i]
		}
	}
	perOp := float64(l.bn.opsPerCopy())
	for _, id := range l.bn.aux {
		a := byID[id]
		if a == nil {
			return nil, nil, fmt.Errorf("no measurement %s", id)
		}
		ar, as, err := a.finish(byID, p, slow, seen)
		if err != nil {
			return nil, nil, fmt.Errorf("needs %s: %w", id, err)
		}
		for i := range runs {
			runs[i] -= ar[i] / perOp
			if carry && as != nil {
				slowRuns[i] -= as[i] / perOp
			}
		}
	}
	l.m.Runs, l.m.SlowRuns = runs, slowRuns
	l.m.Typical = Summarize(runs, p)
	l.m.Typical.Variant = l.bn.variant
	l.m.Spread = l.m.Typical
	if carry {
		l.m.Spread = Summarize(slowRuns, p)
		l.m.Spread.Variant = l.bn.variant
	}
	return runs, slowRuns, nil
}

// slowState summarizes every timing of the probe around the runs: its
// High, the p-th percentile, is the probe's time in the core's slow
// state. false: the probe was not timed.
func slowState(ls []*loaded, p float64) (target.Spread, bool) {
	var all []float64
	for _, l := range ls {
		all = append(all, l.speed...)
	}
	if len(all) == 0 {
		return target.Spread{}, false
	}
	return Summarize(all, p), true
}
