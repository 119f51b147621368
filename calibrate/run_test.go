package calibrate

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cilium/ebpf"

	"github.com/dpperf/dpperf/internal/bpftest"
	"github.com/dpperf/dpperf/target"
)

// loads records the programs a calibration loads.
type loads struct {
	mu    sync.Mutex
	progs []ebpf.ProgramID
}

func (l *loads) hook(t *testing.T) func(*ebpf.Program) {
	return func(p *ebpf.Program) {
		ids := bpftest.IDs(t, p)
		l.mu.Lock()
		l.progs = append(l.progs, ids...)
		l.mu.Unlock()
	}
}

func subset(id string) bool {
	return id == "per_packet" || id == SpeedKey || strings.HasPrefix(id, "classes.alu64") || id == "classes.ld_imm64/indep" || id == "helpers.map_lookup_elem.hash/key40" ||
		id == "cond64.taken" || id == "memory.stack.atomic/add"
}

// TestRunSubset measures a few costs on the kernel: each is positive, has
// a spread over the runs, and no program stays loaded.
func TestRunSubset(t *testing.T) {
	var l loads
	res, err := Run(context.Background(), Options{Quick: true, Runs: 3, Loaded: l.hook(t), only: subset})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.progs) == 0 {
		t.Fatal("no program loaded")
	}
	if left := bpftest.StillLoaded(l.progs); len(left) > 0 {
		t.Errorf("programs %v still loaded", left)
	}
	ids := map[string]*Measurement{}
	for _, m := range res.Measurements {
		if m.Err != nil {
			t.Errorf("%s: %v", m.ID(), m.Err)
			continue
		}
		ids[m.ID()] = m
		if len(m.Runs) != 3 {
			t.Errorf("%s: %d runs", m.ID(), len(m.Runs))
		}
	}
	for _, id := range []string{"per_packet", SpeedKey, "classes.alu64/indep", "helpers.map_lookup_elem.hash/key40", "memory.stack.atomic/add"} {
		m := ids[id]
		if m == nil {
			t.Fatalf("%s not measured", id)
		}
		if m.Spread.High <= 0 || m.Spread.Min > m.Spread.High || m.Spread.High > m.Spread.Max {
			t.Errorf("%s: spread %+v", id, m.Spread)
		}
	}
	tg, err := res.Target("host-test", Throughput)
	if err != nil {
		t.Fatal(err)
	}
	back := roundTrip(t, tg)
	if back.Calibration == nil || back.Calibration.Runs != 3 || back.Calibration.Spread["classes.alu64"].Variant != "indep" {
		t.Errorf("calibration %+v", back.Calibration)
	}
	if !back.Estimated["classes.mul"] || back.Estimated["classes.alu64"] {
		t.Errorf("estimated %v: want the unmeasured mul, not alu64", back.Estimated)
	}
	// The host's target: costs from the runs carried to the slow state,
	// under the latency model; the runs as measured kept (they survive the
	// file) as the throughput model takes them, and used for the expected
	// rate. (--quick times no chains: the latency model takes what there is.)
	ht, err := res.HostTarget()
	if err != nil {
		t.Fatal(err)
	}
	hb := roundTrip(t, ht)
	m := ids["classes.alu64/indep"]
	if len(m.SlowRuns) != len(m.Runs) {
		t.Errorf("alu64: runs %v, carried %v: want every run carried", m.Runs, m.SlowRuns)
	}
	if hb.Calibration.Model != Latency || hb.Calibration.Spread["classes.alu64"] != m.Spread || hb.Calibration.TypicalSpread["classes.alu64"] != m.Typical {
		t.Errorf("host target: model %s, alu64 %+v, typical %+v; measured %+v, typical %+v", hb.Calibration.Model,
			hb.Calibration.Spread["classes.alu64"], hb.Calibration.TypicalSpread["classes.alu64"], m.Spread, m.Typical)
	}
	te, err := Expected(hb)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := te.Classes["alu64"][0], RoundUp(m.Typical.Median, floor); got != want {
		t.Errorf("expected alu64 %g, want the median of the runs as measured %g", got, want)
	}
	// The speed probe is no cost; its spread is kept for timing beside replays.
	if s, ok := back.Calibration.Spread[SpeedKey]; !ok || s.High != ids[SpeedKey].Spread.High {
		t.Errorf("speed probe spread %+v in the calibration, measured %+v", s, ids[SpeedKey].Spread)
	}
	if back.Estimated[SpeedKey] {
		t.Errorf("the speed probe is listed among the estimated costs")
	}
}

// TestProbe: the probe loads as the calibration's, times positive and
// unloads on Close.
func TestProbe(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("BPF_PROG_TEST_RUN needs root")
	}
	p, err := NewProbe()
	if err != nil {
		t.Fatal(err)
	}
	ns, err := p.Time()
	p.Close()
	if err != nil || ns <= 0 {
		t.Fatalf("probe: %g ns, %v", ns, err)
	}
	if _, err := p.Time(); err == nil {
		t.Error("a closed probe still runs")
	}
}

// TestRunCancel: cancelled during the runs, Run returns the context's
// error and unloads every program.
func TestRunCancel(t *testing.T) {
	var l loads
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err := Run(ctx, Options{Quick: true, Runs: 50, Loaded: l.hook(t), only: subset,
		Progress: func(msg string) {
			if strings.HasPrefix(msg, "run 1/") {
				cancel()
			}
		}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	if left := bpftest.StillLoaded(l.progs); len(left) > 0 {
		t.Errorf("programs %v still loaded", left)
	}
}

// roundTrip writes tg and reads it back.
func roundTrip(t *testing.T, tg *target.Target) *target.Target {
	t.Helper()
	data, err := target.Marshal(tg)
	if err != nil {
		t.Fatal(err)
	}
	back, err := target.Parse(data)
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	return back
}

// TestRunOutcomes runs the outcome programs of an LRU hash on the kernel
// (a lookup and a delete that miss, an insert paired with its delete) and
// the lookups in a socket map and a device map:
// each loads, passes the verifier and is measured, and the insert's
// figure has the missing delete's subtracted (it needs that measurement).
func TestRunOutcomes(t *testing.T) {
	want := []string{"helpers.map_lookup_elem.lru_hash/miss", "helpers.map_delete_elem.lru_hash/miss",
		"helpers.map_update_elem.lru_hash/insert", "helpers.map_lookup_elem.xskmap", "helpers.map_lookup_elem.devmap"}
	only := func(id string) bool {
		return slices.Contains(want, id) || strings.HasPrefix(id, "classes.alu64") || id == "classes.ld_imm64/indep"
	}
	res, err := Run(context.Background(), Options{Quick: true, Runs: 3, only: only})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, m := range res.Measurements {
		if m.Err != nil {
			t.Errorf("%s: %v", m.ID(), m.Err)
			continue
		}
		got[m.ID()] = len(m.Runs) == 3
	}
	for _, id := range want {
		if !got[id] {
			t.Errorf("%s not measured in 3 runs (measured: %v)", id, got)
		}
	}
}

// TestFinishCarries: each run is carried to the slow state by the probe
// timed around it (run × slow / probe), auxiliary measurements are
// subtracted run by run in both forms, and the spread is the carried
// runs', the typical one the runs' as measured.
func TestFinishCarries(t *testing.T) {
	aux := &loaded{bn: &bench{key: "a"}, raw: []float64{1, 1}, speed: []float64{50, 100}, m: &Measurement{Key: "a"}}
	l := &loaded{bn: &bench{key: "x", aux: []string{"a"}}, raw: []float64{10, 20}, speed: []float64{50, 100}, m: &Measurement{Key: "x"}}
	runs, slow, err := l.finish(map[string]*loaded{"a": aux}, 90, 100, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(runs, []float64{9, 19}) || !slices.Equal(slow, []float64{18, 19}) {
		t.Errorf("runs %v, carried %v; want [9 19] and [18 19]", runs, slow)
	}
	if l.m.Spread.Max != 19 || l.m.Spread.Min != 18 || l.m.Typical.Min != 9 {
		t.Errorf("spread %+v, typical %+v", l.m.Spread, l.m.Typical)
	}
	// Without a probe nothing is carried.
	n := &loaded{bn: &bench{key: "y"}, raw: []float64{3}, m: &Measurement{Key: "y"}}
	if _, slow, _ := n.finish(nil, 90, 100, nil); slow != nil || n.m.Spread != n.m.Typical {
		t.Errorf("no probe: carried %v, spread %+v, typical %+v", slow, n.m.Spread, n.m.Typical)
	}
}
