package interp

import (
	"testing"

	"github.com/dpperf/dpperf/cfg"
	"github.com/dpperf/dpperf/interp/inputs"
)

// graphPath maps an executed path onto the loop-free graph with
// cfg.PathOf and returns the graph path's static instruction count.
func graphPath(t *testing.T, g *cfg.Graph, path []int32) int {
	t.Helper()
	edges, err := cfg.PathOf(g, path)
	if err != nil {
		t.Fatal(err)
	}
	static := 0
	for _, ei := range edges {
		first, last := g.Insns(g.Edges[ei].To)
		static += last - first + 1
	}
	return static
}

// TestPathOnGraph: for every example, test_xdp_noinline and libxdp1
// program and many packets, the
// executed path is a source-to-sink path of cfg.Build's graph, and its
// instruction count equals the graph path's static count.
func TestPathOnGraph(t *testing.T) {
	pkts := inputs.Packets(2, 200)
	for _, p := range examplePrograms(t, true) {
		t.Run(name(p), func(t *testing.T) {
			g, err := cfg.Build(p, cfg.Options{})
			if err != nil {
				t.Fatalf("cfg.Build: %v", err)
			}
			it, maps := setup(t, p, inputs.StartState(p, 2))
			for i, pkt := range pkts {
				res, err := it.Run(Input{Packet: pkt}, maps)
				if err != nil {
					t.Fatalf("packet %d: %v", i, err)
				}
				if res.Count != len(res.Path) {
					t.Fatalf("packet %d: count %d, path of %d", i, res.Count, len(res.Path))
				}
				if n := graphPath(t, g, res.Path); n != res.Count {
					t.Fatalf("packet %d: graph path counts %d instructions, the run %d", i, n, res.Count)
				}
			}
		})
	}
}
