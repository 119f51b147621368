package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dpperf/dpperf/internal/testobj"
	"github.com/dpperf/dpperf/target"
)

// TestTargetsFitFromSamples fits timed paths kept by an earlier fit: the
// written target records the fit, its costs are the measured ones scaled
// by group, and the envelope puts no path below its time.
func TestTargetsFitFromSamples(t *testing.T) {
	out := filepath.Join(t.TempDir(), "fit.yaml")
	table, errs, code := dpperf(t, "targets", "fit", "--target", "x86-64", "--write", out,
		"--groups", "alu+branch+memory+call,per_packet", "--from-samples", "testdata/fit-samples.json", "--hold-out=false")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(table, "fit (envelope): alu ×") || !strings.Contains(table, "error: min +0.0%") || strings.Contains(table, "held out") {
		t.Errorf("table:\n%s", table)
	}
	fitted, err := target.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	base, _ := target.Load("x86-64")
	f := fitted.Calibration.Fit
	if f == nil || f.Kind != "envelope" || f.Samples != 12 || len(f.Programs) == 0 || f.ErrMin < 0 {
		t.Fatalf("fit record %+v", f)
	}
	s := f.Scale[target.GroupALU]
	if s <= 0 || s != f.Scale[target.GroupBranch] || f.Scale[target.GroupHelper] != 0 {
		t.Errorf("scales %v: alu and branch tied, helper not fitted", f.Scale)
	}
	if got, want := fitted.Classes["alu64"][0], base.Classes["alu64"][0]*s; got != want {
		t.Errorf("alu64 %g, want %g × %g", got, base.Classes["alu64"][0], s)
	}
	if fitted.Helpers["map_lookup_elem"]["hash"] != base.Helpers["map_lookup_elem"]["hash"] {
		t.Error("a group outside the fit changed")
	}
}

// TestTargetsFitPercentileFromSamples: --percentile takes each path's
// statistic again from the runs in the samples file, so an envelope of the
// medians is lower than one of the 90th percentiles, and still puts no
// path below its median.
func TestTargetsFitPercentileFromSamples(t *testing.T) {
	scale := map[string]float64{}
	for _, pct := range []string{"50", "90"} {
		out := filepath.Join(t.TempDir(), "fit.yaml")
		table, errs, code := dpperf(t, "targets", "fit", "--target", "x86-64", "--write", out, "--percentile", pct,
			"--groups", "alu+branch+memory+call+per_packet", "--from-samples", "testdata/fit-samples.json", "--hold-out=false")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		if !strings.Contains(table, "error: min +0.0%") {
			t.Errorf("p%s: a path lies below the envelope:\n%s", pct, table)
		}
		fitted, err := target.Load(out)
		if err != nil {
			t.Fatal(err)
		}
		scale[pct] = fitted.Calibration.Fit.Scale[target.GroupALU]
	}
	if !(scale["50"] < scale["90"]) {
		t.Errorf("scale covering the medians %g, the 90th percentiles %g: want it lower", scale["50"], scale["90"])
	}
}

// By default the envelope is widened by the worst program held out of
// the fit, every group but the per-packet overhead alike.
func TestTargetsFitHoldOut(t *testing.T) {
	out := filepath.Join(t.TempDir(), "fit.yaml")
	table, errs, code := dpperf(t, "targets", "fit", "--target", "x86-64", "--write", out,
		"--groups", "alu+branch+memory+call,per_packet", "--from-samples", "testdata/fit-samples.json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(table, "held out: 9 programs, each against a fit of the others; the worst, ") {
		t.Errorf("table:\n%s", table)
	}
	fitted, err := target.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	f := fitted.Calibration.Fit
	if f.Margin <= 0 || f.ErrMin <= 0 {
		t.Errorf("margin %g, least error %g: every path should be predicted above its time", f.Margin, f.ErrMin)
	}
	if h := f.Scale[target.GroupHelper]; math.Abs(h-(1+f.Margin)) > 0.001 {
		t.Errorf("helper (not fitted) scaled %g, want 1 + margin %g", h, f.Margin)
	}
	// The overhead keeps the scale of the fit without hold-out.
	plain := filepath.Join(t.TempDir(), "plain.yaml")
	if _, errs, code := dpperf(t, "targets", "fit", "--target", "x86-64", "--write", plain, "--hold-out=false",
		"--groups", "alu+branch+memory+call,per_packet", "--from-samples", "testdata/fit-samples.json"); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	p, err := target.Load(plain)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := f.Scale[target.GroupPerPacket], p.Calibration.Fit.Scale[target.GroupPerPacket]; math.Abs(a-b) > 1e-3 {
		t.Errorf("per_packet scaled %g with hold-out, %g without: the overhead is not widened", a, b)
	}
}

func TestTargetsFitUsage(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte(`[{"Share": [1, 2]}]`), 0o644)
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"targets", "fit", "--write", "x.yaml", "a.o"}, "--target and --write are required"},
		{[]string{"targets", "fit", "--target", "x86-64", "--write", "x.yaml"}, "give the objects"},
		{[]string{"targets", "fit", "--target", "x86-64", "--write", "x.yaml", "--kind", "mean", "a.o"}, "--kind must be"},
		{[]string{"targets", "fit", "--target", "x86-64", "--write", "x.yaml", "--from-samples", bad}, "bad.json: sample 1: want 8 group shares"},
		{[]string{"targets", "fit", "--target", "x86-64", "--write", "x.yaml", "--groups", "alu,fpu", "--from-samples", "testdata/fit-samples.json"}, `unknown cost group "fpu"`},
		{[]string{"targets", "fit", "--target", "x86-64", "--write", "x.yaml", "testdata/fit-samples.json"}, "fit-samples.json: not a BPF ELF object: no ELF header"},
	} {
		_, errs, code := dpperf(t, c.args...)
		if code != 2 || !strings.Contains(errs, c.msg) {
			t.Errorf("%v: exit %d, %s", c.args, code, errs)
		}
	}
}

// TestTargetsFitTimesObjects fits a measured target to paths of an
// example program timed on the kernel.
func TestTargetsFitTimesObjects(t *testing.T) {
	out := filepath.Join(t.TempDir(), "fit.yaml")
	_, errs, code := dpperf(t, "targets", "fit", "--target", "x86-64", "--write", out, "--kind", "median",
		"--runs", "3", "--paths", "4", testobj.Built(t, "parser"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	fitted, err := target.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if f := fitted.Calibration.Fit; f == nil || f.Kind != "median" || f.Samples != 4 {
		t.Errorf("fit record %+v", f)
	}
}

// TestTargetsFitUnionOfSamples: --from-samples with several files fits
// their union, so the envelope covers the slower of two timings of the
// same paths.
func TestTargetsFitUnionOfSamples(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile("testdata/fit-samples.json")
	if err != nil {
		t.Fatal(err)
	}
	var ss []map[string]any
	if err := json.Unmarshal(data, &ss); err != nil {
		t.Fatal(err)
	}
	for _, s := range ss { // the same paths, timed twice as slow
		for _, k := range []string{"High", "Median"} {
			s[k] = 2 * s[k].(float64)
		}
		for _, k := range []string{"Runs", "SlowRuns"} {
			if runs, ok := s[k].([]any); ok {
				for i := range runs {
					runs[i] = 2 * runs[i].(float64)
				}
			}
		}
	}
	slow := filepath.Join(dir, "slow.json")
	js, _ := json.Marshal(ss)
	if err := os.WriteFile(slow, js, 0o644); err != nil {
		t.Fatal(err)
	}
	fit := func(from string) *target.Fit {
		out := filepath.Join(dir, "fit.yaml")
		if _, errs, code := dpperf(t, "targets", "fit", "--target", "x86-64", "--write", out,
			"--groups", "alu+branch+memory+call+per_packet", "--from-samples", from, "--hold-out=false"); code != 0 {
			t.Fatalf("--from-samples %s: exit %d: %s", from, code, errs)
		}
		tg, err := target.Load(out)
		if err != nil {
			t.Fatal(err)
		}
		return tg.Calibration.Fit
	}
	fast, twice, union := fit("testdata/fit-samples.json"), fit(slow), fit("testdata/fit-samples.json,"+slow)
	if union.Samples != 2*fast.Samples {
		t.Errorf("union of %d samples, want %d", union.Samples, 2*fast.Samples)
	}
	a, b, u := fast.Scale[target.GroupALU], twice.Scale[target.GroupALU], union.Scale[target.GroupALU]
	if !(b > a) || math.Abs(u-b) > 1e-9*b {
		t.Errorf("alu scale %g alone, %g twice as slow, %g for the union: want the slower's", a, b, u)
	}
}
