package bound

import (
	"context"
	"strings"
	"testing"

	"github.com/dpperf/dpperf/bpfprog"
	"github.com/dpperf/dpperf/cfg"
	"github.com/dpperf/dpperf/internal/testobj"
)

func costed(t testing.TB, name, tgt string) *Costed {
	t.Helper()
	p, err := bpfprog.LoadFile(testobj.Built(t, name), "")
	if err != nil {
		t.Fatal(err)
	}
	g, err := cfg.Build(p, cfg.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return Cost(g, mustTarget(t, tgt))
}

// TestFig2SSP: the naive path of Figure 2 is impossible (IPv4 and IPv6 at
// once); the slowest satisfiable one is IPv6 with at least 100 bytes.
func TestFig2SSP(t *testing.T) {
	c := costed(t, "fig2", "nfp-agilio-cx")
	var series []Progress
	r, err := SSP(context.Background(), c, SearchOptions{Workers: 1, Progress: func(p Progress) { series = append(series, p) }})
	if err != nil {
		t.Fatal(err)
	}
	if r.Kind != "ssp" || len(r.Paths) != 1 {
		t.Fatalf("kind %s with %d paths", r.Kind, len(r.Paths))
	}
	ex := r.Paths[0].Example
	if ex == nil {
		t.Fatal("no example packet")
	}
	if ex.Length < 100 || !ex.Minimal || ex.Length != 100 {
		t.Errorf("example of %d bytes (minimal %v), want exactly 100", ex.Length, ex.Minimal)
	}
	// One of the two branches, never both (that path is impossible):
	// which one is slower depends on the target.
	if l := strings.Join(ex.Layers, "\n"); !strings.Contains(l, "type IPv4 (0x0800)") && !strings.Contains(l, "type IPv6 (0x86dd)") {
		t.Errorf("example is neither IPv4 nor IPv6: %v", ex.Layers)
	}
	if r.Naive == nil || r.Bound.PathRate <= r.Naive.PathRate {
		t.Errorf("SSP path rate %g not above the naive %v", r.Bound.PathRate, r.Naive)
	}
	if r.Search.Refuted < 1 {
		t.Errorf("no path refuted")
	}
	for i := 1; i < len(series); i++ {
		if series[i].Bound < series[i-1].Bound {
			t.Errorf("bound fell from %g to %g", series[i-1].Bound, series[i].Bound)
		}
	}
	t.Logf("naive %g, ssp %g pps; %+v", r.Naive.PathRate, r.Bound.PathRate, *r.Search)
}
