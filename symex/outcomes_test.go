package symex

import (
	"context"
	"slices"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/dpperf/dpperf/bpfprog"
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

// TestFixOutcomes: an example keeps an operation's outcome only where the
// path fixes it. A lookup whose result the program drops and an update of
// a key no lookup tested are Unknown, whatever the model says; an update
// after the path tested a lookup of the same key is fixed to that
// lookup's outcome, and so is the tested lookup.
func TestFixOutcomes(t *testing.T) {
	hash := &bpfprog.Map{Name: "h", Type: ebpf.Hash, KeySize: 4, ValueSize: 8, MaxEntries: 4}
	key := asm.Instructions{ // R2 = &key (0) on the stack, R1 = the map
		asm.StoreImm(asm.R10, -4, 0, asm.Word),
		asm.Mov.Reg(asm.R2, asm.R10),
		asm.Add.Imm(asm.R2, -4),
		asm.LoadMapPtr(asm.R1, 0).WithReference("h"),
	}
	update := slices.Concat(key, asm.Instructions{
		asm.Mov.Imm(asm.R5, 1),
		asm.StoreMem(asm.R10, -16, asm.R5, asm.DWord),
		asm.Mov.Reg(asm.R3, asm.R10),
		asm.Add.Imm(asm.R3, -16),
		asm.Mov.Imm(asm.R4, 0),
		asm.FnMapUpdateElem.Call(),
	})
	ret := asm.Instructions{asm.Mov.Imm(asm.R0, 2), asm.Return()}
	skip := asm.JEq.Imm(asm.R0, 0, "")
	skip.Offset = 1
	for _, c := range []struct {
		name    string
		insns   asm.Instructions
		unknown []bool // per operation, for every path
	}{
		{"dropped lookup", slices.Concat(key, asm.Instructions{asm.FnMapLookupElem.Call()}, ret), []bool{true}},
		{"update alone", slices.Concat(update, ret), []bool{true}},
		{"tested lookup, then update", slices.Concat(key, asm.Instructions{
			asm.FnMapLookupElem.Call(),
			skip, // a hit and a miss each go on to the update
			asm.Mov.Imm(asm.R6, 1),
		}, update, ret), []bool{false, false}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := bpfprog.New("ops.o", ebpf.XDP, c.insns, map[string]*bpfprog.Map{"h": hash})
			g := graphFrom(t, p, err)
			ck, err := NewChecker(g, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer ck.Close()
			n := 0
			for _, path := range allPaths(t, g, 10) {
				out, err := ck.Check(context.Background(), path)
				if err != nil || out.Result != smt.Sat {
					t.Fatalf("path %v: %v, %v", path, out.Result, err)
				}
				ex, err := ck.Example(context.Background())
				if err != nil || ex == nil {
					t.Fatalf("example: %v, %v", ex, err)
				}
				if len(ex.Lookups) != len(c.unknown) {
					t.Fatalf("operations %+v, want %d", ex.Lookups, len(c.unknown))
				}
				for i, l := range ex.Lookups {
					if l.Unknown != c.unknown[i] {
						t.Errorf("path %v, operation %d: %+v, want unknown %v", path, i, l, c.unknown[i])
					}
				}
				if len(ex.Lookups) == 2 && !ex.Lookups[1].Unknown && ex.Lookups[1].Found != ex.Lookups[0].Found {
					t.Errorf("path %v: update %+v after lookup %+v: the same key, another outcome", path, ex.Lookups[1], ex.Lookups[0])
				}
				n++
			}
			if n == 0 {
				t.Fatal("no path")
			}
		})
	}
}
