package main

import (
	"math"
	"strings"
	"testing"

	"github.com/dpperf/dpperf/bound"
	"github.com/dpperf/dpperf/calibrate"
	"github.com/dpperf/dpperf/target"
)

// result is a bound --measure result whose example ran the given checks.
func result(kind string, boundPPS float64, m bound.Measured) *bound.Result {
	r := &bound.Result{Kind: kind, Basis: "calibrated", Bound: bound.Bound{PacketRate: boundPPS}}
	r.Target.Name = "x86-64-host"
	if kind == "ssp" {
		r.Paths = []bound.PathReport{{Measured: &m}}
	}
	return r
}

func ran(checks ...bound.PathCheck) bound.Measured { return bound.Measured{Checks: checks} }

func example(pred, meas float64) bound.PathCheck {
	return bound.PathCheck{Path: "example", How: "repeated", Predicted: pred, Measured: meas}
}

// atSlow is example with its replay carried to the calibration's slow speed.
func atSlow(pred, meas, slow float64) bound.PathCheck {
	c := example(pred, meas)
	c.AtSlowSpeed = slow
	return c
}

// TestSummarize: a known answer. A path whose median replay is below its
// own prediction is a violation even when its fastest replay is above; a
// stateful program's repeats are held against their own path; a program
// without an example is listed and not compared.
func TestSummarize(t *testing.T) {
	rep := &Report{Date: "2026-11-25T00:00:00Z", Target: "host", Reps: 3}
	single := func(pred, meas float64) bound.PathCheck {
		return bound.PathCheck{Path: "example", How: "single runs", Predicted: pred, Measured: meas}
	}
	repeats := func(pred, meas float64) bound.PathCheck {
		return bound.PathCheck{Path: "repeats", How: "repeated", Predicted: pred, Measured: meas}
	}
	rows := map[string][]*bound.Result{
		"a": {result("ssp", 10e6, ran(atSlow(10e6, 20e6, 11e6))), result("ssp", 10e6, ran(atSlow(10e6, 25e6, 12.5e6))), result("ssp", 10e6, ran(atSlow(10e6, 12e6, 12e6)))},
		"b": {result("ssp", 10e6, ran(atSlow(10e6, 9e6, 9e6))), result("ssp", 10e6, ran(atSlow(10e6, 11e6, 9.5e6))), result("ssp", 10e6, ran(atSlow(10e6, 8e6, 8e6)))},
		"s": {result("ssp", 4e6, ran(single(4e6, 5e6), repeats(8e6, 7e6))), result("ssp", 4e6, ran(single(4e6, 6e6), repeats(8e6, 7.5e6))),
			result("ssp", 4e6, ran(single(4e6, 5.5e6), repeats(8e6, 9e6)))},
		"d": {result("intermediate", 1e6, bound.Measured{})},
	}
	for _, name := range []string{"a", "b", "s", "d"} {
		row := &Row{Program: name}
		for _, r := range rows[name] {
			row.add(r)
		}
		rep.Rows = append(rep.Rows, row)
	}
	rep.summarize()
	a, b, s, d := rep.Rows[0], rep.Rows[1], rep.Rows[2], rep.Rows[3]
	if a.Status != "held" || a.Paths[0].Median != 20e6 || a.Paths[0].Ratio != 0.5 || a.Paths[0].Below != 0 {
		t.Errorf("a: %s %+v", a.Status, a.Paths[0])
	}
	if b.Status != "VIOLATED" || b.Paths[0].Median != 9e6 || b.Paths[0].Below != 2 {
		t.Errorf("b: %s %+v", b.Status, b.Paths[0])
	}
	if s.Status != "VIOLATED" || len(s.Paths) != 2 || !s.Paths[0].Held || s.Paths[1].Held || s.Paths[1].Median != 7.5e6 {
		t.Errorf("s: %s %+v %+v", s.Status, s.Paths[0], s.Paths[1])
	}
	if d.Status != "intermediate" {
		t.Errorf("d %s", d.Status)
	}
	if rep.Compared != 3 || rep.Violations != 2 || math.Abs(rep.MedianRatio-4.0/5.5) > 1e-12 {
		t.Errorf("compared %d, violations %d, median ratio %g", rep.Compared, rep.Violations, rep.MedianRatio)
	}
	// Against the slowest replays: a 10/12, b 10/8, s 4/5.
	if math.Abs(rep.MedianSlowestRatio-10.0/12) > 1e-12 {
		t.Errorf("median ratio against the slowest replay %g, want %g", rep.MedianSlowestRatio, 10.0/12)
	}
	// At the slow speed: a 10/12 (no replay below), b 10/9 (below); s has
	// no probe and is not counted. The empirical median of two is the lower.
	if math.Abs(rep.MedianSlowStateRatio-10.0/12) > 1e-12 || rep.SlowStateBelow != 1 || a.Paths[0].SlowState != 12e6 {
		t.Errorf("at the slow speed: median ratio %g, programs below %d, a %g", rep.MedianSlowStateRatio, rep.SlowStateBelow, a.Paths[0].SlowState)
	}
	var md strings.Builder
	if err := rep.writeMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| a | 10.00 | example (repeated) | 10.00 / – | 12.00 / 20.00 | 12.00 | 0.50 | 0.83 | 0.83 | – | 0 of 3 | held |",
		"| b | 10.00 | example (repeated) | 10.00 / – | 8.00 / 9.00 | 9.00 | 1.11 | 1.25 | 1.11 | – | 2 of 3 | VIOLATED |",
		"|  |  | repeats (repeated) | 8.00 / – | 7.00 / 7.50 | – | 1.07 | 1.14 | – | – | 2 of 3 | VIOLATED |",
		"Programs with a path below its prediction at the slow speed: 1.",
		"3 of 4 programs compared: 2 violations", "- d not compared: intermediate",
		"`--target host` (x86-64-host, basis calibrated)"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("no %q in\n%s", want, md.String())
		}
	}
	if rep.base() != "2026-11-25-bound-host" {
		t.Errorf("file name %s", rep.base())
	}
}

// TestReplaySpeed: the replays' speed over the slow state is the median
// over every replay of measured / carried to the slow speed (here 2, 2.5
// and 1, on two paths), and the report says what it leaves a guarantee.
func TestReplaySpeed(t *testing.T) {
	rep := &Report{Date: "2026-11-25T00:00:00Z", Target: "host", Reps: 2}
	row := &Row{Program: "a"}
	row.add(result("ssp", 5e6, ran(atSlow(5e6, 20e6, 10e6), bound.PathCheck{Path: "repeats", How: "repeated", Predicted: 8e6, Measured: 12e6, AtSlowSpeed: 12e6})))
	row.add(result("ssp", 5e6, ran(atSlow(5e6, 25e6, 10e6))))
	rep.Rows = []*Row{row}
	rep.summarize()
	if rep.ReplaySpeed != 2 {
		t.Errorf("replay speed %g, want 2", rep.ReplaySpeed)
	}
	var md strings.Builder
	if err := rep.writeMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if want := "median of ×2.00 the speed of the calibration's slow state (speed probe): a guarantee priced for the slow state is at most 0.50 of such a replay."; !strings.Contains(md.String(), want) {
		t.Errorf("no %q in\n%s", want, md.String())
	}
}

// TestDominantLine: a path that runs at more than twice its prediction is
// listed with the bound path's dearest line and its share; one within
// twice is not.
func TestDominantLine(t *testing.T) {
	rep := &Report{Date: "2026-11-25T00:00:00Z", Target: "host", Reps: 1, Pricing: "every cost at the p90"}
	lines := []bound.SourceLine{{Loc: "-", Text: "(per-packet overhead of the target)", Share: 0.2},
		{Loc: "x.c:42", Text: "  v = bpf_map_lookup_elem(&m, &k);", Share: 0.64}, {Loc: "x.c:43", Share: 0.16}}
	for _, c := range []struct {
		name       string
		pred, meas float64
	}{{"slow", 10e6, 40e6}, {"tight", 10e6, 15e6}} {
		ex := example(c.pred, c.meas)
		ex.Expected = 2.5 * c.pred
		r := result("ssp", c.pred, ran(ex))
		r.Paths[0].Lines = lines
		row := &Row{Program: c.name}
		row.add(r)
		rep.Rows = append(rep.Rows, row)
	}
	rep.summarize()
	var md strings.Builder
	if err := rep.writeMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	want := "- slow, path example: predicted / measured 0.25; the bound's dearest line is x.c:42 (v = bpf_map_lookup_elem(&m, &k);), 64% of the path's cost" +
		"; the guarantee is 0.40 of the expected rate: every cost at the p90\n"
	if !strings.Contains(md.String(), want) {
		t.Errorf("no %q in\n%s", want, md.String())
	}
	if strings.Contains(md.String(), "- tight") {
		t.Errorf("a path within twice its prediction listed:\n%s", md.String())
	}
}

// TestPricing: a known answer from a calibration with a speed probe and a
// fit's margin, and nothing for a target without a calibration.
func TestPricing(t *testing.T) {
	tg := &target.Target{Calibration: &target.Calibration{Percentile: 90,
		Spread: map[string]target.Spread{calibrate.SpeedKey: {Median: 59, High: 83.4}},
		Fit:    &target.Fit{Kind: "envelope", Margin: 0.212}}}
	want := "every cost at the p90 of runs carried to the slow state (speed probe 83.4 ns against 59 ns at its median, ×1.41), the program's own cost (all but the per-packet overhead) times the fit's hold-out margin ×1.212"
	if got := pricing(tg); got != want {
		t.Errorf("pricing:\n got %s\nwant %s", got, want)
	}
	if got := pricing(&target.Target{}); got != "" {
		t.Errorf("pricing without a calibration: %q", got)
	}
	if got := loadPricing("no-such-target"); got != "" {
		t.Errorf("pricing of a target that cannot be read: %q", got)
	}
}
