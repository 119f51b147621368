package perfiface

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/dpperf/dpperf/bpfprog"
	"github.com/dpperf/dpperf/internal/testobj"
	"github.com/dpperf/dpperf/interp/inputs"
	"github.com/dpperf/dpperf/target"
)

func exploreDepth(t *testing.T, file string, depth int) (*bpfprog.Program, *Exploration) {
	t.Helper()
	g := graphOf(t, file, "")
	p := g.Prog
	ex, err := Explore(context.Background(), g, ExploreOptions{Workers: 2, MaxDepth: depth})
	if err != nil {
		t.Fatal(err)
	}
	if ex.Truncated {
		t.Fatalf("%s: exploration truncated", file)
	}
	return p, ex
}

// TestBoundedAgainstInterpreter: with the tree cut at a depth, every
// packet the interpreter runs belongs to exactly one path of the
// interface; an explored path predicts its instruction count exactly, and
// a bounded one brackets it, and its cost under a target, between its
// cheapest and dearest ways.
func TestBoundedAgainstInterpreter(t *testing.T) {
	tg, err := target.Load("x86-64")
	if err != nil {
		t.Fatal(err)
	}
	pkts := inputs.Packets(11, 400)
	for _, n := range []string{"xdpfilt_alw_ip", "xdpfilt_dny_udp", "xdpfilt_alw_all"} {
		f := filepath.Join(testobj.LibXDPDir, n+".o")
		t.Run(n, func(t *testing.T) {
			p, ex := exploreDepth(t, f, 8)
			if ex.Progress.Bounded == 0 {
				t.Fatal("no subtree was cut at depth 8")
			}
			insns, err := Build(ex, MetricInsns, nil, f)
			if err != nil {
				t.Fatal(err)
			}
			cost, err := Build(ex, MetricCost, tg, f)
			if err != nil {
				t.Fatal(err)
			}
			run := runner(t, p, ex.G)
			bounded := 0
			for k, pkt := range pkts {
				res, edges := run(k, pkt)
				i, ok := insns.Locate(edges)
				if !ok {
					t.Fatalf("packet %d belongs to no path of the interface (%d instructions)", k, res.Count)
				}
				pi := insns.Paths[i]
				if !pi.Bounded {
					if pi.Insns != res.Count {
						t.Fatalf("packet %d: predicted %d instructions, executed %d", k, pi.Insns, res.Count)
					}
					continue
				}
				bounded++
				if res.Count < pi.Insns || res.Count > pi.Upper.Insns {
					t.Fatalf("packet %d: %d instructions outside its bounded path's %d..%d", k, res.Count, pi.Insns, pi.Upper.Insns)
				}
				ci := cost.Paths[i]
				got := atOne(cost.price(edges, false).Value)
				if lo, hi := atOne(ci.Value), atOne(ci.Upper.Value); got < lo-1e-9 || got > hi+1e-9 {
					t.Fatalf("packet %d: cost %g outside its bounded path's %g..%g", k, got, lo, hi)
				}
			}
			if bounded == 0 {
				t.Fatal("no packet entered a bounded subtree")
			}
			t.Logf("%d paths (%d bounded), %d of %d packets in bounded ones", len(ex.Paths), ex.Progress.Bounded, bounded, len(pkts))
		})
	}
}

// TestDepthBeyondTree: a depth bound the tree does not reach changes
// nothing, and depth 1 leaves the root decision and two bounded leaves.
func TestDepthBeyondTree(t *testing.T) {
	f := testobj.Built(t, "flowtable")
	_, full := explore(t, f, "")
	_, deep := exploreDepth(t, f, 1000)
	if deep.Progress.Bounded != 0 || len(deep.Paths) != len(full.Paths) {
		t.Fatalf("depth 1000: %d paths, %d bounded; unbounded: %d paths", len(deep.Paths), deep.Progress.Bounded, len(full.Paths))
	}
	_, one := exploreDepth(t, f, 1)
	if one.Root == nil || one.Root.Leaf() || !one.Root.Then.Leaf() || !one.Root.Else.Leaf() {
		t.Fatal("depth 1: the root is not one decision between two leaves")
	}
	for i, p := range one.Paths {
		if !p.Bounded {
			t.Errorf("depth 1: path %d is not bounded", i)
		}
	}
}
