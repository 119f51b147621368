package bound

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/google/pprof/profile"
)

// TestProfileMatchesLines: the profile of the slowest path, read back with
// the pprof library and summed per source line, gives the report's cost
// of every line, and its instructions.
func TestProfileMatchesLines(t *testing.T) {
	for _, tc := range []struct{ prog, tgt string }{{"flowtable", "x86-64"}, {"fig2", "nfp-agilio-cx"}, {"parser", "x86-64"}} {
		c := costed(t, tc.prog, tc.tgt)
		r, err := Naive(context.Background(), c, 1)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := c.WriteProfile(&buf, r); err != nil {
			t.Fatal(err)
		}
		p, err := profile.Parse(&buf)
		if err != nil {
			t.Fatalf("%s: the written profile does not parse: %v", tc.prog, err)
		}
		type sums struct {
			cost  []float64
			insns int64
		}
		byLine := map[string]*sums{}
		for _, s := range p.Sample {
			l := s.Location[0].Line[0]
			key := "-"
			if l.Line > 0 {
				key = fmt.Sprintf("%s:%d", l.Function.Filename, l.Line)
			}
			if byLine[key] == nil {
				byLine[key] = &sums{cost: make([]float64, len(c.T.Components))}
			}
			for k := range c.T.Components {
				byLine[key].cost[k] += float64(s.Value[k]) / profileScale
			}
			byLine[key].insns += s.Value[len(c.T.Components)]
		}
		want := map[string]*sums{}
		for _, l := range r.Paths[0].Lines {
			if want[l.Loc] == nil {
				want[l.Loc] = &sums{cost: make([]float64, len(c.T.Components))}
			}
			for k, comp := range c.T.Components {
				want[l.Loc].cost[k] += l.Cost[comp.Name]
			}
			want[l.Loc].insns += int64(l.Instructions)
		}
		if len(byLine) != len(want) {
			t.Errorf("%s: %d lines in the profile, %d in the report", tc.prog, len(byLine), len(want))
		}
		for loc, w := range want {
			g := byLine[loc]
			if g == nil {
				t.Errorf("%s: line %s missing from the profile", tc.prog, loc)
				continue
			}
			if g.insns != w.insns {
				t.Errorf("%s %s: %d instructions in the profile, %d in the report", tc.prog, loc, g.insns, w.insns)
			}
			for k := range w.cost {
				// Each sample rounds to a thousandth of the unit.
				if math.Abs(g.cost[k]-w.cost[k]) > 1e-3*float64(g.insns+2) {
					t.Errorf("%s %s %s: %g in the profile, %g in the report", tc.prog, loc, c.T.Components[k].Name, g.cost[k], w.cost[k])
				}
			}
		}
	}
}
