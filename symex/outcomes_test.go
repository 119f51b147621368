package symex

import (
	"context"
	"testing"

	"github.com/cilium/ebpf/asm"

	"github.com/dpperf/dpperf/cfg"
	"github.com/dpperf/dpperf/internal/testobj"
	"github.com/dpperf/dpperf/smt"
)

// pathLookups lists the instructions of a path's map lookups, updates and
// deletes, in order.
func pathLookups(g *cfg.Graph, edges []int32) []int {
	var out []int
	for _, e := range edges {
		for _, op := range g.Nodes[g.Edges[e].From].Ops {
			if op.Kind == cfg.OpHelper && (op.Helper == asm.FnMapLookupElem || op.Helper == asm.FnMapUpdateElem || op.Helper == asm.FnMapDeleteElem) {
				out = append(out, int(op.Insn))
			}
		}
	}
	return out
}

// TestExampleLookups: every satisfiable path's example lists the path's
// map lookups in order, and the outcome its model gives each agrees with
// the map contents the example needs: a lookup of a key the example needs
// absent misses. Both outcomes occur.
func TestExampleLookups(t *testing.T) {
	for _, name := range []string{"flowcount", "counter", "flowcount_v2"} {
		g := graphOf(t, testobj.Built(t, name), "")
		c, err := NewChecker(g, Options{})
		if err != nil {
			t.Fatal(err)
		}
		seen := map[bool]int{}
		for _, p := range allPaths(t, g, 200) {
			out, err := c.Check(context.Background(), p)
			if err != nil {
				t.Fatal(err)
			}
			if out.Result != smt.Sat {
				continue
			}
			ex, err := c.Example(context.Background())
			if err != nil || ex == nil {
				t.Fatalf("%s: example: %v", name, err)
			}
			want := pathLookups(g, p)
			if len(ex.Lookups) != len(want) {
				t.Fatalf("%s: example lookups %v, path's %v", name, ex.Lookups, want)
			}
			absent := map[string]bool{}
			for _, m := range ex.Maps {
				if !m.Global {
					absent[m.Map] = m.Absent
				}
			}
			for i, l := range ex.Lookups {
				if l.Insn != want[i] {
					t.Errorf("%s: lookup %d at instruction %d, want %d", name, i, l.Insn, want[i])
				}
				seen[l.Found]++
			}
			if name == "flowcount" && len(ex.Lookups) == 1 && absent["flows"] == ex.Lookups[0].Found {
				t.Errorf("flowcount: lookup found %v, but the example needs flows' key absent: %v", ex.Lookups[0].Found, absent["flows"])
			}
		}
		c.Close()
		if seen[true] == 0 || seen[false] == 0 {
			t.Errorf("%s: outcomes %v, want hits and misses", name, seen)
		}
	}
}
