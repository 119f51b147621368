package main

import (
	"strings"
	"testing"

	"github.com/dpperf/dpperf/bound"
)

func result(kind string, boundPPS, measured float64, m bound.Measured) *bound.Result {
	m.PacketRate = measured
	r := &bound.Result{Kind: kind, Basis: "calibrated", Bound: bound.Bound{PacketRate: boundPPS}}
	r.Target.Name = "x86-64-host"
	if kind == "ssp" {
		r.Paths = []bound.PathReport{{Measured: &m}}
	}
	return r
}

// TestSummarize: a known answer. A program whose median replay is below
// its bound is a violation even when its fastest replay is above; rows
// whose replays do not follow the path are reported but not compared.
func TestSummarize(t *testing.T) {
	ok := bound.Measured{VerdictMatches: true, PathMatches: true}
	rep := &Report{Date: "2026-11-25T00:00:00Z", Target: "host", Reps: 3}
	rows := map[string][]*bound.Result{
		"a": {result("ssp", 10e6, 20e6, ok), result("ssp", 10e6, 25e6, ok), result("ssp", 10e6, 12e6, ok)},
		"b": {result("ssp", 10e6, 9e6, ok), result("ssp", 10e6, 11e6, ok), result("ssp", 10e6, 8e6, ok)},
		"c": {result("ssp", 10e6, 5e6, bound.Measured{Mismatch: "map xsks cannot be filled"})},
		"d": {result("intermediate", 1e6, 0, ok)},
	}
	for _, name := range []string{"a", "b", "c", "d"} {
		row := &Row{Program: name}
		for _, r := range rows[name] {
			row.add(r)
		}
		rep.Rows = append(rep.Rows, row)
	}
	rep.summarize()
	a, b, c, d := rep.Rows[0], rep.Rows[1], rep.Rows[2], rep.Rows[3]
	if a.Status != "held" || a.Median != 20e6 || a.Ratio != 0.5 || a.Below != 0 {
		t.Errorf("a: %+v", a)
	}
	if b.Status != "VIOLATED" || b.Median != 9e6 || b.Below != 2 {
		t.Errorf("b: %+v", b)
	}
	if c.Status != "not replayable" || d.Status != "intermediate" {
		t.Errorf("c %s, d %s", c.Status, d.Status)
	}
	if rep.Compared != 2 || rep.Violations != 1 || rep.MedianRatio != 0.5 {
		t.Errorf("compared %d, violations %d, median ratio %g", rep.Compared, rep.Violations, rep.MedianRatio)
	}
	var md strings.Builder
	if err := rep.writeMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| a | 10.00 | 12.00 / 20.00 | 0.50 | 0 of 3 | held |", "| b | 10.00 | 8.00 / 9.00 | 1.11 | 2 of 3 | VIOLATED |",
		"2 programs compared: 1 violations", "`--target host` (x86-64-host, basis calibrated)"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("no %q in\n%s", want, md.String())
		}
	}
	if rep.base() != "2026-11-25-bound-host" {
		t.Errorf("file name %s", rep.base())
	}
}
