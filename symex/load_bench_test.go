package symex

import (
	"context"
	"testing"

	"github.com/dpperf/dpperf/internal/testobj"
)

// BenchmarkLoad executes the 50 longest paths of the DNS name walk (about
// 1,000 edges each) symbolically, without the solver: the executor's own
// cost, which dominates the search on parser loops.
func BenchmarkLoad(b *testing.B) {
	g := graphOf(b, testobj.Built(b, "dns_qname"), "")
	paths := allPaths(b, g, 50)
	c, err := NewChecker(g, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	edges := 0
	for b.Loop() {
		for _, p := range paths {
			c.path, c.levels = nil, nil // from the source every time
			_ = c.load(context.Background(), p)
			edges += len(c.levels)
		}
	}
	b.ReportMetric(float64(edges)/b.Elapsed().Seconds(), "edges/s")
}
