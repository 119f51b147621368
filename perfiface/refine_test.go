package perfiface

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/dpperf/dpperf/bpfprog"
	"github.com/dpperf/dpperf/cfg"
	"github.com/dpperf/dpperf/internal/testobj"
	"github.com/dpperf/dpperf/interp/inputs"
)

func refine(t *testing.T, file string, opts RefineOptions) (*bpfprog.Program, *Exploration, *Interface) {
	t.Helper()
	g := graphOf(t, file, "")
	p := g.Prog
	opts.Workers, opts.Metric = 2, MetricInsns
	ex, err := Refine(context.Background(), g, opts)
	if err != nil {
		t.Fatal(err)
	}
	if ex.Truncated || ex.Stopped || ex.Root == nil {
		t.Fatalf("%s: refinement stopped early", file)
	}
	it, err := Build(ex, MetricInsns, nil, file)
	if err != nil {
		t.Fatal(err)
	}
	return p, ex, it
}

// exactClasses is the number of classes of an interface at 0+, leaves
// with equal formulas merged only as the exact view merges them.
func exactClasses(it *Interface) int {
	coarse := it.Coarse
	it.Coarse = false // the same coalescing as the exact view
	defer func() { it.Coarse = coarse }()
	return it.View(1e-9).Classes()
}

// TestRefineToExact: refined down to a resolution below one instruction,
// the coarse tree leaves open only subtrees of one cost, so it has the
// exact interface's classes, and every path it explored to the end is
// a path of the exact exploration.
func TestRefineToExact(t *testing.T) {
	for _, f := range []string{testobj.Built(t, "flowtable"), testobj.Built(t, "parser"),
		filepath.Join(testobj.LibXDPDir, "xdpfilt_dny_eth.o")} {
		t.Run(filepath.Base(f), func(t *testing.T) {
			_, full := explore(t, f, "")
			exact, err := Build(full, MetricInsns, nil, f)
			if err != nil {
				t.Fatal(err)
			}
			_, ex, it := refine(t, f, RefineOptions{Resolution: 0.5})
			if it.Reached != 0 {
				t.Errorf("open subtrees up to %g wide at resolution 0.5", it.Reached)
			}
			known := map[string]bool{}
			for _, p := range full.Paths {
				known[cfg.PathKey(p.Edges)] = true
			}
			done := 0
			for _, p := range ex.Paths {
				if !p.Bounded {
					done++
					if !known[cfg.PathKey(p.Edges)] {
						t.Errorf("refined path %v is not a path of the exploration", p.Edges)
					}
				}
			}
			if got, want := exactClasses(it), exactClasses(exact); got != want {
				t.Errorf("%d classes at 0+, exact interface %d", got, want)
			}
			if done > len(full.Paths) {
				t.Errorf("%d paths explored to the end, the program has %d", done, len(full.Paths))
			}
			t.Logf("%d feasible paths; refined: %d to the end, %d open, %d classes", len(full.Paths), done, len(ex.Paths)-done, exactClasses(it))
		})
	}
}

// TestRefineDefault: without a resolution, a program of more than 10^5
// feasible paths is refined to a tree of a few hundred leaves, and the
// resolution Choose picks gives at most DefaultClasses classes and a
// screenful of Python.
func TestRefineDefault(t *testing.T) {
	f := filepath.Join(testobj.LibXDPDir, "xdpfilt_alw_all.o")
	_, ex, it := refine(t, f, RefineOptions{})
	if n := len(ex.Paths); n > spare*DefaultClasses*20 {
		t.Errorf("%d leaves refined", n)
	}
	if it.Reached <= 0 || it.Bounded == 0 {
		t.Fatalf("reached %g with %d open subtrees: not coarse", it.Reached, it.Bounded)
	}
	r := it.Choose(DefaultClasses)
	if r <= it.Floor() || it.Floor() != it.Reached/2 {
		t.Errorf("chosen resolution %g at or below the floor %g (widest open subtree %g)", r, it.Floor(), it.Reached)
	}
	v := it.View(r)
	if c := v.Classes(); c > DefaultClasses || c < 2 {
		t.Errorf("%d classes at the chosen resolution %g", c, r)
	}
	if l := it.pythonLines(v); l > 150 {
		t.Errorf("%d lines of Python at the chosen resolution %g", l, r)
	}
	// Every class is narrower than twice the resolution: its middle is
	// within the resolution of every input.
	var walk func(n *VNode)
	walk = func(n *VNode) {
		if n.leaf() {
			if n.Hi-n.Lo >= 2*r {
				t.Errorf("class %g..%g at resolution %g", n.Lo, n.Hi, r)
			}
			return
		}
		walk(n.Then)
		walk(n.Else)
	}
	walk(v.Root)
	th := it.Thresholds()
	if th[0].Value != it.Floor() || !slices.IsSortedFunc(th, func(a, b Threshold) int { return b.Classes - a.Classes }) {
		t.Errorf("thresholds %v do not start at %g with classes falling", th, it.Floor())
	}
}

// TestRefineAgainstInterpreter: every packet the interpreter runs belongs
// to exactly one leaf of a coarse interface, and costs what the leaf
// says: exactly on a path explored to the end, within the open
// subtree's range otherwise.
func TestRefineAgainstInterpreter(t *testing.T) {
	pkts := inputs.Packets(13, 300)
	for _, n := range []string{"xdpfilt_alw_ip", "xdpfilt_alw_all"} {
		f := filepath.Join(testobj.LibXDPDir, n+".o")
		t.Run(n, func(t *testing.T) {
			p, ex, it := refine(t, f, RefineOptions{Classes: 10})
			run := runner(t, p, ex.G)
			open := 0
			for k, pkt := range pkts {
				res, edges := run(k, pkt)
				i, ok := it.Locate(edges)
				if !ok {
					t.Fatalf("packet %d belongs to no leaf of the interface", k)
				}
				pi := it.Paths[i]
				if !pi.Bounded {
					if pi.Insns != res.Count {
						t.Fatalf("packet %d: predicted %d instructions, executed %d", k, pi.Insns, res.Count)
					}
					continue
				}
				open++
				if res.Count < pi.Insns || res.Count > pi.Upper.Insns {
					t.Fatalf("packet %d: %d instructions outside its open subtree's %d..%d", k, res.Count, pi.Insns, pi.Upper.Insns)
				}
			}
			if open == 0 {
				t.Fatal("no packet entered an open subtree")
			}
		})
	}
}
