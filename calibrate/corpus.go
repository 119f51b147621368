package calibrate

import (
	"context"
	"fmt"
	"slices"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/dpperf/dpperf/bound"
	"github.com/dpperf/dpperf/bpfprog"
	"github.com/dpperf/dpperf/cfg"
	"github.com/dpperf/dpperf/interp"
	"github.com/dpperf/dpperf/interp/inputs"
	"github.com/dpperf/dpperf/mapstate"
	"github.com/dpperf/dpperf/symex"
	"github.com/dpperf/dpperf/target"
	"github.com/dpperf/dpperf/testrun"
)

// Sample is one path of a real program, timed on this host: what a fit
// learns from.
type Sample struct {
	Program string    // file:program
	Insns   int       // instructions the path runs
	Packet  []byte    // the packet that takes it, from the start state
	Share   []float64 // the path's cost under the measured target, per group (target.Groups)
	Runs    []float64 // ns per packet, one per interleaved run
	// SlowRuns are Runs carried to the calibration's slow state by the
	// speed probe timed around each (empty when the calibration has no
	// probe): what an envelope must cover for its bounds to hold when the
	// core runs slow.
	SlowRuns []float64 `json:",omitempty"`
	High     float64   // the Percentile of SlowRuns, or of Runs without them
	Median   float64   // the median of Runs
}

// Predicted is the sample's cost with every group's share scaled.
func (s *Sample) Predicted(scale map[string]float64) float64 {
	sum := 0.0
	for i, g := range target.Groups {
		f, ok := scale[g]
		if !ok {
			f = 1
		}
		sum += f * s.Share[i]
	}
	return sum
}

// SetHigh makes the sample's High the p-th percentile of its runs carried
// to the slow state, or of its runs as measured when it has none.
func (s *Sample) SetHigh(p float64) {
	if len(s.SlowRuns) > 0 {
		s.High = Percentile(s.SlowRuns, p)
		return
	}
	s.High = Percentile(s.Runs, p)
}

// CorpusOptions set up the timing of real paths.
type CorpusOptions struct {
	Packets    int     // candidate packets per program (default 300)
	PerProgram int     // distinct paths kept per program (default 12)
	Runs       int     // interleaved timings of every path (default 11)
	Repeat     int     // BPF_PROG_TEST_RUN repeats per timing (default 100000)
	Percentile float64 // taken as a sample's High (default 90)
	CPU        int
	Seed       uint64
	Progress   func(msg string)
	Loaded     func(*ebpf.Program)
}

func (o *CorpusOptions) defaults() {
	if o.Packets <= 0 {
		o.Packets = 300
	}
	if o.PerProgram <= 0 {
		o.PerProgram = 12
	}
	if o.Runs <= 0 {
		o.Runs = 11
	}
	if o.Repeat <= 0 {
		o.Repeat = 100000
	}
	if o.Percentile <= 0 {
		o.Percentile = 90
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
}

// corpusProgram is one program with the paths chosen from it.
type corpusProgram struct {
	runner  *testrun.Runner
	state   *mapstate.State
	samples []*Sample
}

// Corpus runs generated packets (interptest) through each program on the
// interpreter from a start state whose keys the packets hit, keeps up to
// PerProgram distinct steady paths — the path a packet takes on its second
// and third run alike, which is what a repeated BPF_PROG_TEST_RUN times —
// prices each path's groups under t, and times every path Runs times on
// the kernel, interleaved across all programs. Programs whose runs read
// the clock or random numbers keep only paths the interpreter found
// deterministic.
func Corpus(ctx context.Context, progs []*bpfprog.Program, t *target.Target, opts CorpusOptions) ([]*Sample, error) {
	opts.defaults()
	say := func(format string, args ...any) {
		if opts.Progress != nil {
			opts.Progress(fmt.Sprintf(format, args...))
		}
	}
	var cps []*corpusProgram
	defer func() {
		for _, cp := range cps {
			cp.runner.Close()
		}
	}()
	for _, p := range progs {
		say("choosing paths of %s", p.Name)
		cp, err := choosePaths(p, t, opts)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p.Name, err)
		}
		if len(cp.samples) == 0 {
			continue
		}
		cp.runner, err = testrun.Load(p, cp.state, testrun.Options{CPU: opts.CPU})
		if err != nil {
			return nil, err
		}
		cps = append(cps, cp)
		if opts.Loaded != nil {
			opts.Loaded(cp.runner.Program())
		}
	}
	probe, err := ProbeFor(t)
	if err != nil {
		return nil, err
	}
	defer probe.Close()
	var all []*Sample
	for run := 0; run < opts.Runs; run++ {
		for _, cp := range cps {
			for _, s := range cp.samples {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				say("run %d/%d: %s", run+1, opts.Runs, s.Program)
				if err := cp.runner.Fill(cp.state); err != nil {
					return nil, err
				}
				ns, factor, err := probe.Around(opts.CPU, func() (float64, error) {
					d, _, err := cp.runner.Time(testrun.Input{Packet: s.Packet}, opts.Repeat)
					return float64(d.Nanoseconds()), err
				})
				if err != nil {
					return nil, err
				}
				s.Runs = append(s.Runs, ns)
				if factor > 0 {
					s.SlowRuns = append(s.SlowRuns, ns*factor)
				}
			}
		}
	}
	for _, cp := range cps {
		for _, s := range cp.samples {
			s.SetHigh(opts.Percentile)
			s.Median = Percentile(s.Runs, 50)
			all = append(all, s)
		}
	}
	return all, nil
}

// choosePaths picks a program's distinct steady paths.
func choosePaths(p *bpfprog.Program, t *target.Target, opts CorpusOptions) (*corpusProgram, error) {
	g, err := cfg.Build(p, cfg.Options{})
	if err != nil {
		return nil, err
	}
	base, err := mapstate.ObjectDefaults(p)
	if err != nil {
		return nil, err
	}
	state := mapstate.Overlay(base, inputs.StartState(p, opts.Seed))
	it, err := interp.New(p, interp.Options{})
	if err != nil {
		return nil, err
	}
	ncpu, err := ebpf.PossibleCPU()
	if err != nil {
		return nil, err
	}
	flags, err := interp.ObjectMapFlags(p)
	if err != nil {
		return nil, err
	}
	pather := cfg.NewPather(g)
	groups := make([]*bound.Costed, len(target.Groups))
	for i, grp := range target.Groups {
		groups[i] = bound.Cost(g, t.Only(grp))
	}
	cp := &corpusProgram{state: state}
	seen := map[string]bool{}
	for _, pkt := range inputs.Packets(opts.Seed, opts.Packets) {
		maps, err := interp.NewMaps(p, state, interp.MapOptions{NumCPU: ncpu, Flags: flags})
		if err != nil {
			return nil, err
		}
		var runs [3]*interp.Result
		for i := range runs {
			if runs[i], err = it.Run(interp.Input{Packet: pkt}, maps); err != nil {
				break
			}
		}
		if err != nil || runs[1].Nondeterministic || !slices.Equal(runs[1].Path, runs[2].Path) {
			continue
		}
		edges, err := pather.Path(runs[1].Path)
		if err != nil {
			continue // a loop ran more often than the graph unrolls it
		}
		key := cfg.PathKey(edges)
		if seen[key] {
			continue
		}
		seen[key] = true
		// Priced as a bound prices a satisfiable path (OutcomeCost): its
		// map operations at the outcomes this run took, so that the fit
		// scales the prices the bounds use. Priced at the dearest outcome,
		// the paths that miss pulled the helper group's scale down below
		// what the paths that hit take.
		s := &Sample{Program: p.File + ":" + p.Name, Insns: runs[1].Count, Packet: pkt, Share: make([]float64, len(groups))}
		ops := outcomesOf(runs[1].Calls)
		for i, c := range groups {
			cost, _ := c.OutcomeCost(edges, ops)
			s.Share[i] = cost[0]
		}
		cp.samples = append(cp.samples, s)
	}
	// Keep the most different paths: spread over the instruction counts.
	slices.SortFunc(cp.samples, func(a, b *Sample) int { return a.Insns - b.Insns })
	if n := len(cp.samples); n > opts.PerProgram && opts.PerProgram > 1 {
		kept := make([]*Sample, 0, opts.PerProgram)
		for i := range opts.PerProgram {
			kept = append(kept, cp.samples[i*(n-1)/(opts.PerProgram-1)])
		}
		cp.samples = kept
	}
	return cp, nil
}

// outcomesOf is the outcome of each map lookup, update and delete of an
// interpreted run, in order, as the bound prices them
// (bound.Costed.OutcomeCost): a lookup finds its key when it returns a
// value; an update or delete as the interpreter saw the map before it
// (Unknown where it does not say, priced at the dearest).
func outcomesOf(calls []interp.Call) []symex.Lookup {
	var out []symex.Lookup
	for _, c := range calls {
		switch c.Helper {
		case asm.FnMapLookupElem:
			out = append(out, symex.Lookup{Insn: int(c.Insn), Found: c.Ret != 0})
		case asm.FnMapUpdateElem, asm.FnMapDeleteElem:
			out = append(out, symex.Lookup{Insn: int(c.Insn), Found: c.Key == interp.KeyPresent, Unknown: c.Key == interp.KeyUnknown})
		}
	}
	return out
}
