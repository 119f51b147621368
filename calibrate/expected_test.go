package calibrate

import (
	"context"
	"maps"
	"math"
	"strings"
	"testing"

	"github.com/dpperf/dpperf/bound"
	"github.com/dpperf/dpperf/bpfprog"
	"github.com/dpperf/dpperf/cfg"
	"github.com/dpperf/dpperf/internal/testobj"
	"github.com/dpperf/dpperf/target"
)

// TestExpectedAtMedians: the expected target of a real calibration prices
// every directly measured cost at its median (rounded up as calibrated
// costs are), no cost above the guarantee's, and a conditional jump's
// taken and not-taken totals no higher either.
func TestExpectedAtMedians(t *testing.T) {
	g, err := target.Load("../target/testdata/calibrated.yaml")
	if err != nil {
		t.Fatal(err)
	}
	e, err := Expected(g)
	if err != nil || e == nil {
		t.Fatalf("Expected = %v, %v", e, err)
	}
	if e.Basis != target.BasisEstimated {
		t.Errorf("basis %s: an expected rate is no guarantee", e.Basis)
	}
	sp := g.Calibration.Spread
	checked := 0
	for key, s := range sp {
		var got, guar float64
		switch {
		case key == "per_packet":
			got, guar = e.PerPacket[0], g.PerPacket[0]
		case strings.HasPrefix(key, "classes."):
			c := strings.TrimPrefix(key, "classes.")
			got, guar = e.Classes[c][0], g.Classes[c][0]
		case strings.HasPrefix(key, "memory."):
			f := strings.Split(key, ".")
			got, guar = e.Memory[f[1]][f[2]].Cost[0], g.Memory[f[1]][f[2]].Cost[0]
		default:
			continue
		}
		checked++
		if want := RoundUp(s.Median, floor); got != want {
			t.Errorf("%s: expected cost %g, want the median %g", key, got, want)
		}
		if got > guar {
			t.Errorf("%s: expected cost %g above the guarantee's %g", key, got, guar)
		}
	}
	if checked < 15 {
		t.Fatalf("only %d costs checked", checked)
	}
	for h, byMap := range g.Helpers {
		for m, v := range byMap {
			if e.Helpers[h][m][0] > v[0] {
				t.Errorf("helpers.%s.%s: expected %g above the guarantee's %g", h, m, e.Helpers[h][m][0], v[0])
			}
		}
	}
	for _, c := range []string{"cond32", "cond64"} {
		if e.Classes[c][0]+e.Taken[0] > g.Classes[c][0]+g.Taken[0]+1e-9 || e.Classes[c][0]+e.NotTaken[0] > g.Classes[c][0]+g.NotTaken[0]+1e-9 {
			t.Errorf("%s: a jump costs more expected than guaranteed", c)
		}
	}
}

// TestExpectedOnlyForCalibrations: estimated and fitted targets have no
// expected costs.
func TestExpectedOnlyForCalibrations(t *testing.T) {
	x, err := target.Load("x86-64")
	if err != nil {
		t.Fatal(err)
	}
	if e, err := Expected(x); e != nil || err != nil {
		t.Errorf("Expected(x86-64) = %v, %v; want none", e, err)
	}
	g, err := target.Load("../target/testdata/calibrated.yaml")
	if err != nil {
		t.Fatal(err)
	}
	f := g.Scaled(map[string]float64{"alu": 1.1})
	f.Calibration.Fit = &target.Fit{Kind: "envelope"}
	if e, err := Expected(f); e != nil || err != nil {
		t.Errorf("Expected(fitted) = %v, %v; want none", e, err)
	}
}

// TestExpectedOfFit: an envelope that kept its median fit is expected at
// the median fit's scales (each group's costs times expected/envelope),
// and at the calibration's own medians in the groups the median fit did
// not scale (map_write, per_packet here), not at the envelope's price.
func TestExpectedOfFit(t *testing.T) {
	g, err := target.Load("../target/testdata/calibrated.yaml")
	if err != nil {
		t.Fatal(err)
	}
	base, err := Expected(g)
	if err != nil || base == nil {
		t.Fatalf("Expected(calibrated) = %v, %v", base, err)
	}
	scale := map[string]float64{target.GroupALU: 0.8, target.GroupHelper: 0.5, target.GroupMapWrite: 1.2}
	f := g.Scaled(scale)
	f.Calibration.Fit = &target.Fit{Kind: Envelope, Scale: scale,
		ExpectedScale: map[string]float64{target.GroupALU: 0.4, target.GroupHelper: 0.5}}
	e, err := Expected(f)
	if err != nil || e == nil {
		t.Fatalf("Expected(fitted) = %v, %v", e, err)
	}
	if e.Basis != target.BasisEstimated {
		t.Errorf("basis %s: an expected rate is no guarantee", e.Basis)
	}
	for class, v := range f.Classes {
		want := base.Classes[class][0]
		if target.ClassGroup(class) == target.GroupALU {
			want = v[0] / 2
		}
		if got := e.Classes[class][0]; math.Abs(got-want) > 1e-9*want {
			t.Errorf("class %s: expected %g, want %g (guarantee %g)", class, got, want, v[0])
		}
	}
	writes := 0
	for h, byType := range f.Helpers {
		for mt, v := range byType {
			want, why := v[0], "the envelope's (same scale)"
			if target.HelperGroup(h) == target.GroupMapWrite {
				want, why = base.Helpers[h][mt][0], "the calibration's median"
				writes++
				if want >= v[0] {
					t.Errorf("helper %s on %s: median %g not below the envelope's %g", h, mt, want, v[0])
				}
			}
			if got := e.Helpers[h][mt][0]; got != want {
				t.Errorf("helper %s on %s: expected %g, want %s %g", h, mt, got, why, want)
			}
		}
	}
	if writes == 0 {
		t.Error("the test target has no map writes to check")
	}
	if e.PerPacket[0] != base.PerPacket[0] || base.PerPacket[0] >= f.PerPacket[0] {
		t.Errorf("per packet %g, want the calibration's median %g (below the envelope's %g)", e.PerPacket[0], base.PerPacket[0], f.PerPacket[0])
	}
}

// TestExpectedRatesAboveGuarantees: over the slowest paths of real
// programs, a path's expected rate is never below its guaranteed one.
func TestExpectedRatesAboveGuarantees(t *testing.T) {
	g, err := target.Load("../target/testdata/calibrated.yaml")
	if err != nil {
		t.Fatal(err)
	}
	e, err := Expected(g)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"fig2", "flowtable", "counter"} {
		progs, err := bpfprog.XDPPrograms(testobj.Built(t, name))
		if err != nil {
			t.Fatal(err)
		}
		gr, err := cfg.Build(progs[0], cfg.Options{})
		if err != nil {
			t.Fatal(err)
		}
		res, err := bound.Naive(context.Background(), bound.Cost(gr, g), 20)
		if err != nil {
			t.Fatal(err)
		}
		res.SetExpected(bound.Cost(gr, e))
		if res.Expected == nil || res.Expected.PacketRate < res.Bound.PacketRate {
			t.Errorf("%s: expected %+v below the bound %g", name, res.Expected, res.Bound.PacketRate)
		}
		for _, p := range res.Paths {
			if p.ExpectedRate < p.PacketRate {
				t.Errorf("%s path %d: expected %g below the guarantee %g", name, p.Rank, p.ExpectedRate, p.PacketRate)
			}
		}
	}
}

// TestExpectedAtThroughputMedians: a host target priced under the latency
// model with the throughput model's spreads kept is expected at those:
// the independent operations' median, not the chain's.
func TestExpectedAtThroughputMedians(t *testing.T) {
	g, err := target.Load("../target/testdata/calibrated.yaml")
	if err != nil {
		t.Fatal(err)
	}
	g.Calibration.Model = Latency
	g.Calibration.TypicalSpread = maps.Clone(g.Calibration.Spread)
	chain := target.Spread{Min: 0.9, Median: 1.0, High: 1.1, Max: 1.2, Variant: "chain"}
	indep := target.Spread{Min: 0.2, Median: 0.25, High: 0.3, Max: 0.4, Variant: "indep"}
	g.Calibration.Spread["classes.alu64"], g.Calibration.TypicalSpread["classes.alu64"] = chain, indep
	e, err := Expected(g)
	if err != nil {
		t.Fatal(err)
	}
	if got := e.Classes["alu64"][0]; got != 0.25 {
		t.Errorf("expected alu64 %g, want the independent operations' median 0.25", got)
	}
	g.Calibration.TypicalSpread = nil
	if e, err = Expected(g); err != nil {
		t.Fatal(err)
	}
	if got := e.Classes["alu64"][0]; got != 1.0 {
		t.Errorf("without throughput spreads: expected alu64 %g, want the chain's median 1", got)
	}
}
