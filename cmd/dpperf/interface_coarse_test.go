package main

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/dpperf/dpperf/internal/testobj"
)

// TestInterfaceDefaultCoarse: without --resolution, a program of more
// than 10^5 feasible paths gets a complete interface of a screenful, the
// resolution it was chosen at named on the first lines.
func TestInterfaceDefaultCoarse(t *testing.T) {
	obj := filepath.Join(testobj.LibXDPDir, "xdpfilt_alw_all.o")
	out, errs, code := dpperf(t, "interface", "--solver-timeout", "60s", obj)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) > 200 || strings.Contains(out, "PARTIAL") || strings.Contains(out, "STOPPED") {
		t.Fatalf("%d lines, partial or stopped:\n%s", len(lines), out)
	}
	m := regexp.MustCompile(`# Resolution ([0-9.]+) chosen: the finest with at most 30 classes \(([0-9]+) here\)`).FindStringSubmatch(strings.Join(lines[:8], "\n"))
	if m == nil || !strings.Contains(out, "--resolution 0") {
		t.Fatalf("the first lines do not name the chosen resolution and how to ask for more:\n%s", strings.Join(lines[:8], "\n"))
	}
	if n, _ := strconv.Atoi(m[2]); n < 2 || n > 30 || strings.Count(out, "return ") != n {
		t.Errorf("%s classes, %d returns", m[2], strings.Count(out, "return "))
	}
	// JSON: the tree at the chosen resolution, and every decision made.
	out, errs, code = dpperf(t, "interface", "--solver-timeout", "60s", "--json", "--classes", "10", obj)
	if code != 0 {
		t.Fatalf("--json: exit %d: %s", code, errs)
	}
	var j struct {
		Resolution, Reached float64
		Chosen, Coarse      bool
		Paths               []json.RawMessage
		Tree, Explored      *struct{ Test string }
	}
	if err := json.Unmarshal([]byte(out), &j); err != nil {
		t.Fatal(err)
	}
	// reached is the widest open interval: the interface holds above half of it.
	if !j.Chosen || !j.Coarse || j.Resolution <= j.Reached/2 || j.Tree == nil || j.Explored == nil || len(j.Paths) == 0 {
		t.Errorf("json: chosen %v coarse %v resolution %g reached %g, %d paths", j.Chosen, j.Coarse, j.Resolution, j.Reached, len(j.Paths))
	}
}

// TestInterfaceExactCounts: --resolution 0 explores every feasible path,
// as before the coarse default: the counts of small examples.
func TestInterfaceExactCounts(t *testing.T) {
	for _, c := range []struct {
		obj   string
		args  []string
		first string
	}{
		{built(t, "flowtable"), nil, "29 feasible paths"},
		{built(t, "parser"), nil, "18 feasible paths"},
		{filepath.Join(testobj.LibXDPDir, "xdpfilt_alw_ip.o"), []string{"--max-depth", "6"}, "14 feasible paths and 15 subtrees below 6 decisions"},
	} {
		args := append(append([]string{"interface", "--solver-timeout", "60s", "--resolution", "0", "--thresholds"}, c.args...), c.obj)
		out, errs, code := dpperf(t, args...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", c.obj, code, errs)
		}
		if first, _, _ := strings.Cut(out, "\n"); !strings.Contains(first, c.first) {
			t.Errorf("%s: %q, want %q", c.obj, first, c.first)
		}
	}
}

// TestInterfaceResolutionCoarse: --resolution R refines until every
// subtree left unexplored is narrower than R.
func TestInterfaceResolutionCoarse(t *testing.T) {
	obj := filepath.Join(testobj.LibXDPDir, "xdpfilt_alw_ip.o")
	out, errs, code := dpperf(t, "interface", "--solver-timeout", "60s", "--resolution", "200", obj)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	m := regexp.MustCompile(`# Coarse: [0-9]+ subtrees at most ([0-9.]+) wide`).FindStringSubmatch(out)
	if m == nil || strings.Contains(out, "chosen") {
		t.Fatalf("no coarse mark, or a chosen resolution:\n%s", out)
	}
	if w, _ := strconv.ParseFloat(m[1], 64); w >= 200 {
		t.Errorf("open subtrees %g wide at resolution 200", w)
	}
}
