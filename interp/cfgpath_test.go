package interp

import (
	"testing"

	"github.com/dpperf/dpperf/cfg"
	"github.com/dpperf/dpperf/interp/interptest"
)

// graphPath maps an executed path onto the loop-free graph edge by edge:
// from the source, each node's block must be the next instructions of the
// path, and exactly one out-edge must lead to the node holding the
// instruction that follows. It returns the graph path's static instruction
// count.
func graphPath(t *testing.T, g *cfg.Graph, path []int32) int {
	t.Helper()
	out := g.OutEdges()
	cur, k, static := g.Source, 0, 0
	for cur != g.Sink {
		if cur != g.Source {
			first, last := g.Insns(cur)
			for i := first; i <= last; i++ {
				if k >= len(path) || int(path[k]) != i {
					t.Fatalf("node %d holds instructions %d..%d, the path has %v at step %d", cur, first, last, path[k:min(k+3, len(path))], k)
				}
				k++
			}
			static += last - first + 1
		}
		next := cfg.NodeID(-1)
		for _, ei := range out[cur] {
			e := g.Edges[ei]
			to := e.To
			switch {
			case to == g.Sink:
				if k != len(path) {
					continue
				}
			case k >= len(path):
				continue
			default:
				if first, _ := g.Insns(to); first != int(path[k]) {
					continue
				}
			}
			if next >= 0 && next != to {
				t.Fatalf("node %d: two edges lead on to instruction %d", cur, path[k])
			}
			next = to
		}
		if next < 0 {
			t.Fatalf("the path leaves the graph after node %d at step %d (instruction %v)", cur, k, path[k:min(k+1, len(path))])
		}
		cur = next
	}
	return static
}

// TestPathOnGraph: for every example, test_xdp_noinline and libxdp1
// program and many packets, the
// executed path is a source-to-sink path of cfg.Build's graph, and its
// instruction count equals the graph path's static count.
func TestPathOnGraph(t *testing.T) {
	pkts := interptest.Packets(2, 200)
	for _, p := range examplePrograms(t, true) {
		t.Run(name(p), func(t *testing.T) {
			g, err := cfg.Build(p, cfg.Options{})
			if err != nil {
				t.Skipf("cfg.Build: %v", err)
			}
			it, maps := setup(t, p, interptest.StartState(p, 2))
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
