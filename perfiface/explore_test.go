package perfiface

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/dpperf/dpperf/cfg"
	"github.com/dpperf/dpperf/internal/testobj"
	"github.com/dpperf/dpperf/smt"
	"github.com/dpperf/dpperf/symex"
)

// TestFeasibleConfirmed: the exploration decides many sides without a
// check of their own (by an earlier model, by inference from the other
// side, by the packet length interval). Every path it reports feasible
// must be satisfiable when a fresh solver checks the whole path, and no
// path may be reported twice.
func TestFeasibleConfirmed(t *testing.T) {
	files := []string{testobj.Built(t, "parser"), testobj.Built(t, "flowtable"), testobj.Built(t, "legacy"),
		filepath.Join(testobj.LibXDPDir, "xdpfilt_dny_eth.o"), filepath.Join(testobj.LibXDPDir, "xdpdump_xdp.o")}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			_, ex := explore(t, f, "")
			c, err := symex.NewChecker(ex.G, symex.Options{MinPacket: MinPacket})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			seen := map[string]bool{}
			for i, p := range ex.Paths {
				k := cfg.PathKey(p.Edges)
				if seen[k] {
					t.Fatalf("path %d reported twice", i)
				}
				seen[k] = true
				if p.Unknown {
					continue
				}
				// Load a different path first, so that nothing of this one
				// is cached in the checker.
				if _, err := c.Check(context.Background(), p.Edges[:1]); err != nil {
					t.Fatal(err)
				}
				out, err := c.Check(context.Background(), p.Edges)
				if err != nil {
					t.Fatal(err)
				}
				if out.Result != smt.Sat {
					t.Fatalf("path %d of %d reported feasible, a full check says %v", i, len(ex.Paths), out.Result)
				}
			}
			t.Logf("%d paths confirmed", len(ex.Paths))
		})
	}
}

// TestExploreLemmas: on Katran's IPv6 balancer, whose later checks
// repeat contradictions after every earlier choice, the lemmas refute
// most branch sides without the solver, and the exploration finds the
// same paths in the same order as one without them.
func TestExploreLemmas(t *testing.T) {
	g := graphOf(t, testobj.Built(t, "test_xdp_noinline"), "balancer_ingress_v6")
	explore := func(noLemmas bool) *Exploration {
		ex, err := Explore(context.Background(), g, ExploreOptions{Workers: 1, MaxPaths: 500, NoLemmas: noLemmas})
		if err != nil {
			t.Fatal(err)
		}
		return ex
	}
	with, without := explore(false), explore(true)
	if len(with.Paths) != len(without.Paths) {
		t.Fatalf("%d paths with lemmas, %d without", len(with.Paths), len(without.Paths))
	}
	for i := range with.Paths {
		if !slices.Equal(with.Paths[i].Edges, without.Paths[i].Edges) {
			t.Fatalf("path %d differs with lemmas", i)
		}
	}
	if a, b := with.Progress.Checks, without.Progress.Checks; 2*a >= b {
		t.Errorf("%d solver checks with lemmas, %d without: want fewer than half", a, b)
	}
}
