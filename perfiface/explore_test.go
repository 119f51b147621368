package perfiface

import (
	"context"
	"path/filepath"
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
