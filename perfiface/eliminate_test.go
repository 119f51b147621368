package perfiface

import (
	"math"
	"path/filepath"
	"slices"
	"testing"

	"github.com/dpperf/dpperf/internal/testobj"
)

// checkElimination checks the view that elimination builds at r against
// every path (and subtree left open) of the interface: following its
// route, both ways at a constraint it does not meet, ends only in classes
// that hold it and predict its cost within r, and a class holds no path
// whose route does not reach it. It returns the number of classes.
func checkElimination(t *testing.T, it *Interface, r float64) int {
	t.Helper()
	root, next := it.eliminated(r)
	if next < r {
		t.Errorf("resolution %g: next threshold %g below it", r, next)
	}
	x := it.items()
	reached := 0
	for i := range x.list {
		m := &x.list[i]
		n := 0
		var walk func(v *VNode)
		walk = func(v *VNode) {
			if !v.leaf() {
				holds, met := m.outcome(v.key - 1)
				if !met || holds {
					walk(v.Then)
				}
				if !met || !holds {
					walk(v.Else)
				}
				return
			}
			n++
			if !slices.Contains(v.Paths, m.path) {
				t.Errorf("resolution %g: path %d reaches a class that does not hold it", r, m.path)
			}
			mid := atOne(*v.Value)
			if math.Abs(m.lo-mid) >= r || math.Abs(m.hi-mid) >= r {
				t.Errorf("resolution %g: path %d costs %g..%g, its class says %g", r, m.path, m.lo, m.hi, mid)
			}
		}
		walk(root)
		if n == 0 {
			t.Errorf("resolution %g: path %d reaches no class", r, m.path)
		}
		reached += n
	}
	held, classes := 0, 0
	var count func(v *VNode)
	count = func(v *VNode) {
		if v.leaf() {
			held += len(v.Paths)
			classes++
			return
		}
		count(v.Then)
		count(v.Else)
	}
	count(root)
	if held != reached {
		t.Errorf("resolution %g: the classes hold %d paths, the routes reach them %d times", r, held, reached)
	}
	return classes
}

// TestEliminationDefinition checks elimination on the exact interfaces
// of the bundled examples at resolutions from 1 to the widest range.
func TestEliminationDefinition(t *testing.T) {
	for _, name := range []string{"fig2", "flowtable", "parser", "dosfilter", "quiclb", "labels", "loop", "call", "iproute2"} {
		t.Run(name, func(t *testing.T) {
			it := exactInterface(t, testobj.Built(t, name), "", ExploreOptions{})
			w := it.stats[it.Root].width()
			for _, r := range []float64{0.5, 1, 2, 5, 10, 20, 50, w / 4, w / 2, w/2 + 1} {
				checkElimination(t, it, r)
			}
			if n := checkElimination(t, it, w/2+1); n != 1 {
				t.Errorf("%d classes above half the widest range", n)
			}
		})
	}
}

// TestEliminationKatran checks elimination on Katran's exact interface
// (balancer_ingress_v4, every feasible path): accurate at 25, 50, 100 and
// 200 instructions, fewer classes than merging within the tree at 50,
// and at most 30 at 200.
func TestEliminationKatran(t *testing.T) {
	if testing.Short() {
		t.Skip("explores test_xdp_noinline exactly")
	}
	f := filepath.Join(testobj.Root(), "build", "bpf", "test_xdp_noinline.o")
	it := exactInterface(t, f, "balancer_ingress_v4", ExploreOptions{})
	for _, r := range []float64{25, 50, 100, 200} {
		n := checkElimination(t, it, r)
		vw := &viewer{it: it, width: 2 * r, next: math.Inf(1)}
		within := countClasses(coalesce(vw.view(it.Root, newLayout(it.prog)), false))
		t.Logf("resolution %g: %d classes by elimination, %d merging within the tree", r, n, within)
		if r == 50 && n >= within {
			t.Errorf("resolution 50: %d classes by elimination, no fewer than %d merging within the tree", n, within)
		}
		if r == 200 && n > 30 {
			t.Errorf("resolution 200: %d classes", n)
		}
	}
}

// TestDocumentMerge: the document's elimination on the paths of known
// programs. On fig2 and parser, a constraint whose pair of paths differs
// by less than r goes, and what it separated is one class. On Katran v4 at
// the document's resolution 50 it leaves few classes, but wide ones: some
// input lies further than r from its class, which this package's view
// never allows.
func TestDocumentMerge(t *testing.T) {
	if testing.Short() {
		t.Skip("explores test_xdp_noinline exactly")
	}
	f := filepath.Join(testobj.Root(), "build", "bpf", "test_xdp_noinline.o")
	it := exactInterface(t, f, "balancer_ingress_v4", ExploreOptions{})
	prev := math.MaxInt
	for _, r := range []float64{0, 25, 50, 100, 200} {
		dm := it.DocumentMerge(r)
		n := checkElimination(t, it, max(r, 1))
		t.Logf("resolution %g: document %d classes (%d of %d constraints eliminated, %d unpaired), worst error %.1f; unpaired eliminated too %d classes, worst error %.1f; view %d classes",
			r, dm.Classes, dm.Eliminated, dm.Constraints, dm.Unpaired, dm.WorstError, dm.Loose.Classes, dm.Loose.WorstError, n)
		if dm.WorstError > max(r, 0) {
			t.Errorf("resolution %g: keeping the unpaired constraints, a path lies %g from its class", r, dm.WorstError)
		}
		if r == 50 && dm.Loose.WorstError <= r {
			t.Errorf("resolution 50: eliminating every constraint of small or unmeasured impact gives %d classes within %g: the definition holds", dm.Loose.Classes, dm.Loose.WorstError)
		}
		if dm.Classes > prev {
			t.Errorf("resolution %g: %d classes, more than %d at a finer one", r, dm.Classes, prev)
		}
		prev = dm.Classes
		if r == 0 && (dm.Eliminated != 0 || dm.WorstError != 0) {
			t.Errorf("resolution 0: %+v, want nothing eliminated and every path exact", dm)
		}
	}
}
