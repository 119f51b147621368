package perfiface

import (
	"context"
	"math"
	"path/filepath"
	"slices"
	"testing"

	"github.com/dpperf/dpperf/bpfprog"
	"github.com/dpperf/dpperf/cfg"
	"github.com/dpperf/dpperf/internal/testobj"
)

// checkResolution checks the definition on an interface: at every
// threshold and between thresholds, each path's cost (and the dearest
// way of a subtree left open) lies within r of the value of its class,
// the number of classes never grows as r grows, and the view at r has
// the size the thresholds list for it.
func checkResolution(t *testing.T, it *Interface) {
	t.Helper()
	th := it.Thresholds()
	if len(th) == 0 {
		t.Fatal("no thresholds")
	}
	for i := 1; i < len(th); i++ {
		if th[i].Classes > th[i-1].Classes {
			t.Errorf("%d classes above %g, %d above the finer %g", th[i].Classes, th[i].Value, th[i-1].Classes, th[i-1].Value)
		}
	}
	var rs []float64
	for i, x := range th {
		rs = append(rs, math.Nextafter(x.Value, math.Inf(1)), it.Above(x.Value))
		if i+1 < len(th) {
			rs = append(rs, (x.Value+th[i+1].Value)/2, th[i+1].Value)
		} else {
			rs = append(rs, 2*x.Value+1)
		}
	}
	slices.Sort(rs)
	// Below half the widest class left open the interface does not hold.
	floor := it.Floor()
	for _, p := range it.Paths {
		if p.Upper != nil {
			floor = max(floor, (atOne(p.Upper.Value)-atOne(p.Value))/2)
		}
	}
	prev := math.MaxInt
	for _, r := range rs {
		if r <= floor {
			continue
		}
		v := it.View(r)
		n := v.Classes()
		if n > prev {
			t.Errorf("resolution %g: %d classes, more than at a finer one (%d)", r, n, prev)
		}
		prev = n
		want := th[0]
		for _, x := range th {
			if x.Value < r {
				want = x
			}
		}
		if n != want.Classes || it.pythonLines(v) != want.Lines {
			t.Errorf("resolution %g: %d classes in %d lines, the thresholds list %d in %d above %g",
				r, n, it.pythonLines(v), want.Classes, want.Lines, want.Value)
		}
		var walk func(*VNode)
		walk = func(x *VNode) {
			if !x.leaf() {
				walk(x.Then)
				walk(x.Else)
				return
			}
			mid := atOne(*x.Value)
			for _, p := range x.Paths {
				costs := []float64{atOne(it.Paths[p].Value)}
				if u := it.Paths[p].Upper; u != nil {
					costs = append(costs, atOne(u.Value))
				}
				for _, c := range costs {
					if math.Abs(c-mid) >= r {
						t.Errorf("resolution %g: path %d costs %g, its class says %g", r, p, c, mid)
					}
				}
			}
		}
		if v.Root != nil {
			walk(v.Root)
		}
	}
}

// graphOf loads a program and builds its graph.
func graphOf(t testing.TB, file, prog string) *cfg.Graph {
	t.Helper()
	p, err := bpfprog.LoadFile(file, prog)
	if err != nil {
		t.Fatal(err)
	}
	g, err := cfg.Build(p, cfg.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func exactInterface(t *testing.T, file, prog string, opts ExploreOptions) *Interface {
	t.Helper()
	g := graphOf(t, file, prog)
	opts.Workers = 2
	ex, err := Explore(context.Background(), g, opts)
	if err != nil {
		t.Fatal(err)
	}
	if ex.Truncated {
		t.Fatalf("%s: exploration truncated", file)
	}
	it, err := Build(ex, MetricInsns, nil, file)
	if err != nil {
		t.Fatal(err)
	}
	return it
}

// TestResolutionDefinition checks the definition of resolution on the
// exact interfaces of the bundled examples.
func TestResolutionDefinition(t *testing.T) {
	for _, name := range []string{"fig2", "counter", "flowcount", "flowcount_v2", "flowtable", "parser", "dosfilter",
		"quiclb", "labels", "loop", "call", "legacy", "iproute2"} {
		t.Run(name, func(t *testing.T) {
			checkResolution(t, exactInterface(t, testobj.Built(t, name), "", ExploreOptions{}))
		})
	}
}

// TestResolutionKatran checks the definition on Katran's test balancer,
// explored through 12 decisions (the subtrees below are classes bounded
// by their cheapest and dearest ways), and on its coarse-first tree.
func TestResolutionKatran(t *testing.T) {
	if testing.Short() {
		t.Skip("explores test_xdp_noinline")
	}
	f := filepath.Join(testobj.Root(), "build", "bpf", "test_xdp_noinline.o")
	t.Run("depth", func(t *testing.T) {
		checkResolution(t, exactInterface(t, f, "balancer_ingress_v4", ExploreOptions{MaxDepth: 12}))
	})
	t.Run("coarse", func(t *testing.T) {
		ex, err := Refine(context.Background(), graphOf(t, f, "balancer_ingress_v4"), RefineOptions{ExploreOptions: ExploreOptions{Workers: 2},
			Metric: MetricInsns, Resolution: 100})
		if err != nil {
			t.Fatal(err)
		}
		it, err := Build(ex, MetricInsns, nil, f)
		if err != nil {
			t.Fatal(err)
		}
		checkResolution(t, it)
	})
}
