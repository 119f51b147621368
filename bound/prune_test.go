package bound

import (
	"context"
	"math"
	"testing"

	"github.com/dpperf/dpperf/smt"
	"github.com/dpperf/dpperf/symex"
)

// exhaustiveSSP checks every path of c with a Checker that learns nothing
// (no lemmas, no pruned prefixes) and returns the slowest satisfiable
// path's exact metric, or false when c has more than limit paths.
func exhaustiveSSP(t *testing.T, c *Costed, metric Metric, limit int) (float64, int, bool) {
	t.Helper()
	o, err := NewOrderedBy(c, metric, nil)
	if err != nil {
		t.Fatal(err)
	}
	ch, err := symex.NewChecker(c.G, symex.Options{MinPacket: c.T.MinPacket})
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Close()
	s := &search{c: c, opts: SearchOptions{Metric: metric}}
	best, n := math.Inf(1), 0
	for {
		p, ok := o.Next()
		if !ok {
			break
		}
		if n++; n > limit {
			return 0, n, false
		}
		out, err := ch.Check(context.Background(), p.Edges)
		if err != nil {
			t.Fatal(err)
		}
		switch out.Result {
		case smt.Unknown:
			t.Fatalf("path %d: solver timeout", n)
		case smt.Sat:
			ex, err := ch.Example(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			best = min(best, s.exact(p, ex))
		}
	}
	return best, n, true
}

// TestPruningKeepsSSP: the slowest satisfiable path is the same with and
// without each of the search's prunings (refuted prefixes, lemmas from
// unsat cores, families left out of the enumeration), and the same as exhaustive enumeration finds, on small
// programs, for both metrics and two targets.
func TestPruningKeepsSSP(t *testing.T) {
	progs := []string{"fig2", "parser", "flowcount", "labels", "labelcase"}
	configs := []struct {
		name string
		opts SearchOptions
	}{
		{"all", SearchOptions{}},
		{"no-prefixes", SearchOptions{NoPrefixes: true}},
		{"no-lemmas", SearchOptions{NoLemmas: true}},
		{"no-families", SearchOptions{NoFamilies: true}},
		{"families-only", SearchOptions{NoPrefixes: true}},
		{"none", SearchOptions{NoPrefixes: true, NoLemmas: true}},
	}
	for _, prog := range progs {
		for _, tgt := range []string{"nfp-agilio-cx", "x86-64"} {
			for _, metric := range []Metric{PacketRate, BitRate} {
				name := prog + "/" + tgt + "/" + metric.String()
				t.Run(name, func(t *testing.T) {
					c := costed(t, prog, tgt)
					want, n, ok := exhaustiveSSP(t, c, metric, 400)
					if !ok {
						t.Fatalf("more than %d paths: the exhaustive search is no oracle for this program; take it out of the list", n-1)
					}
					for _, cf := range configs {
						opts := cf.opts
						opts.Metric, opts.Workers = metric, 2
						r, err := SSP(context.Background(), c, opts)
						if err != nil {
							t.Fatalf("%s: %v", cf.name, err)
						}
						if r.Kind != "ssp" {
							t.Fatalf("%s: %s", cf.name, r.Kind)
						}
						t.Logf("%s: %d paths checked, %d by lemma, %d lemmas, %d folded, %d families", cf.name, r.Search.Checked, r.Search.ByLemma, r.Search.Lemmas, r.Search.Folded, r.Search.Families)
						got := r.Search.Series[len(r.Search.Series)-1].Bound
						if math.Abs(got-want) > 1e-9*want {
							t.Errorf("%s: SSP %g, exhaustive enumeration of %d paths %g", cf.name, got, n, want)
						}
					}
				})
			}
		}
	}
}

// TestFamiliesHoldNoPath checks every family a search proves impossible
// against exhaustive enumeration: each path that takes a family's edges is
// refuted by a Checker that learns nothing. labelcase must teach families
// (its case folding makes them larger than a prefix), twins among them.
func TestFamiliesHoldNoPath(t *testing.T) {
	for _, prog := range []string{"labels", "labelcase", "parser", "flowcount"} {
		for _, tgt := range []string{"nfp-agilio-cx", "x86-64"} {
			t.Run(prog+"/"+tgt, func(t *testing.T) {
				c := costed(t, prog, tgt)
				o, err := NewOrderedBy(c, PacketRate, nil)
				if err != nil {
					t.Fatal(err)
				}
				var paths [][]int32
				for {
					p, ok := o.Next()
					if !ok {
						break
					}
					paths = append(paths, p.Edges)
				}
				plain, err := symex.NewChecker(c.G, symex.Options{MinPacket: c.T.MinPacket})
				if err != nil {
					t.Fatal(err)
				}
				defer plain.Close()
				ls := &symex.Lemmas{}
				learner, err := symex.NewChecker(c.G, symex.Options{MinPacket: c.T.MinPacket, Lemmas: ls, Families: true})
				if err != nil {
					t.Fatal(err)
				}
				defer learner.Close()
				possible := make([]bool, len(paths))
				for i, p := range paths {
					out, err := plain.Check(context.Background(), p)
					if err != nil {
						t.Fatal(err)
					}
					possible[i] = out.Result != smt.Unsat
					if _, err := learner.Check(context.Background(), p); err != nil {
						t.Fatal(err)
					}
				}
				fams := ls.Families()
				for _, f := range fams {
					for i, p := range paths {
						if possible[i] && symex.Takes(p, f) {
							t.Fatalf("family %v holds path %d %v, which can run", f, i, p)
						}
					}
				}
				t.Logf("%d paths, %d families (%d twins)", len(paths), len(fams), learner.Twins)
				if prog == "labelcase" && (len(fams) == 0 || learner.Twins == 0) {
					t.Fatalf("%d families, %d twins: want both", len(fams), learner.Twins)
				}
			})
		}
	}
}
