package calibrate

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/dpperf/dpperf/bpfprog"
	"github.com/dpperf/dpperf/internal/bpftest"
	"github.com/dpperf/dpperf/internal/testobj"
	"github.com/dpperf/dpperf/target"
)

// TestCorpusTimesRealPaths times a few paths of two example programs on
// the kernel: every path has a timing per run, carries the per-packet
// overhead once, the paths differ, and no program stays loaded.
func TestCorpusTimesRealPaths(t *testing.T) {
	tg, err := target.Load("x86-64")
	if err != nil {
		t.Fatal(err)
	}
	var progs []*bpfprog.Program
	for _, name := range []string{"parser", "flowtable"} {
		p, err := bpfprog.LoadFile(testobj.Built(t, name), "")
		if err != nil {
			t.Fatal(err)
		}
		progs = append(progs, p)
	}
	var l loads
	ss, err := Corpus(context.Background(), progs, tg, CorpusOptions{Packets: 100, PerProgram: 4, Runs: 3, Repeat: 2000, Loaded: l.hook(t)})
	if err != nil {
		t.Fatal(err)
	}
	if left := bpftest.StillLoaded(l.progs); len(left) > 0 {
		t.Errorf("programs %v still loaded", left)
	}
	if len(ss) < 6 {
		t.Fatalf("%d paths timed, want at least 6 of 8", len(ss))
	}
	insns := map[string]map[int]bool{}
	for _, s := range ss {
		if len(s.Runs) != 3 || s.Median <= 0 || s.High < s.Median {
			t.Errorf("%s (%d insns): runs %v, median %g, high %g", s.Program, s.Insns, s.Runs, s.Median, s.High)
		}
		if insns[s.Program] == nil {
			insns[s.Program] = map[int]bool{}
		}
		insns[s.Program][s.Insns] = true
		whole := s.Predicted(nil)
		if pp := s.Share[slices.Index(target.Groups, target.GroupPerPacket)]; pp != tg.PerPacket[0] {
			t.Errorf("%s: per-packet share %g, want the target's %g", s.Program, pp, tg.PerPacket[0])
		}
		if whole <= tg.PerPacket[0] || math.IsNaN(whole) {
			t.Errorf("%s: whole price %g", s.Program, whole)
		}
	}
	for prog, byInsns := range insns {
		if len(byInsns) < 2 {
			t.Errorf("%s: every path timed runs the same number of instructions", prog)
		}
	}
}

// TestCorpusSlowRuns: under a calibration that timed the speed probe,
// every run is also carried to the slow state and the sample's High is
// taken from those. A probe High of 1 ms a run (the probe runs in about
// 0.1 µs) multiplies them by thousands.
func TestCorpusSlowRuns(t *testing.T) {
	tg, err := target.Load("x86-64")
	if err != nil {
		t.Fatal(err)
	}
	tg.Calibration = &target.Calibration{Runs: 1, Percentile: 90, Spread: map[string]target.Spread{SpeedKey: {Min: 1e6, Median: 1e6, High: 1e6, Max: 1e6}}}
	p, err := bpfprog.LoadFile(testobj.Built(t, "parser"), "")
	if err != nil {
		t.Fatal(err)
	}
	var l loads
	ss, err := Corpus(context.Background(), []*bpfprog.Program{p}, tg, CorpusOptions{Packets: 50, PerProgram: 2, Runs: 3, Repeat: 2000, Loaded: l.hook(t)})
	if err != nil {
		t.Fatal(err)
	}
	if len(ss) == 0 {
		t.Fatal("no path timed")
	}
	for _, s := range ss {
		if len(s.SlowRuns) != len(s.Runs) || s.High < 1000*s.Median {
			t.Errorf("%s (%d insns): runs %v, slow runs %v, high %g", s.Program, s.Insns, s.Runs, s.SlowRuns, s.High)
		}
	}
}

// TestCorpusPricesOutcomes: a training path is priced as a bound prices a
// satisfiable path, its map lookups at the outcome its run took. Under the
// fixture whose hash lookups cost 30 ns on a hit, 20 on a miss and 34.8 at
// the dearest, counter's path that finds its source has a helper share of
// 30, and the path that misses it 20 plus the array lookup of its unknown
// counter (0.922); both were 34.8 (+0.922) before. Updates are priced by
// whether the interpreter found their key.
func TestCorpusPricesOutcomes(t *testing.T) {
	tg, err := target.Load("../target/testdata/outcomes.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p, err := bpfprog.LoadFile(testobj.Built(t, "counter"), "")
	if err != nil {
		t.Fatal(err)
	}
	opts := CorpusOptions{}
	opts.defaults()
	cp, err := choosePaths(p, tg, opts)
	if err != nil {
		t.Fatal(err)
	}
	hi := slices.Index(target.Groups, target.GroupHelper)
	var helper []float64
	for _, s := range cp.samples {
		helper = append(helper, math.Round(s.Share[hi]*1000)/1000)
	}
	for _, want := range []float64{30, 20.922} {
		if !slices.Contains(helper, want) {
			t.Errorf("helper shares %v: no path at %g", helper, want)
		}
	}
	// refresh's repeated source finds its budget and writes it back, and
	// rewrites the last source: two updates of keys the interpreter saw
	// in their maps, each at the replace price (50 ns), not the dearest
	// insert (81.3).
	p, err = bpfprog.LoadFile(testobj.Built(t, "refresh"), "")
	if err != nil {
		t.Fatal(err)
	}
	if cp, err = choosePaths(p, tg, opts); err != nil {
		t.Fatal(err)
	}
	wi := slices.Index(target.Groups, target.GroupMapWrite)
	var writes []float64
	for _, s := range cp.samples {
		writes = append(writes, math.Round(s.Share[wi]*1000)/1000)
	}
	if !slices.Contains(writes, 100) {
		t.Errorf("refresh's map_write shares %v: no path with two replaces (100)", writes)
	}
}
