package interp

import (
	"slices"
	"testing"

	"github.com/dpperf/dpperf/interp/inputs"
)

// TestPCVTable: every PCV a run reports is the one pcv.yaml declares for
// its map type and operation, in order, and every declared PCV has a
// description.
func TestPCVTable(t *testing.T) {
	model := Model()
	for _, ops := range model.Maps {
		for _, names := range ops {
			for _, n := range names {
				if model.PCVs[n] == "" {
					t.Errorf("PCV %s has no description", n)
				}
			}
		}
	}
	seen := map[string]bool{}
	for _, p := range examplePrograms(t, true) {
		it, maps := setup(t, p, inputs.StartState(p, 3))
		for _, pkt := range inputs.Packets(3, 100) {
			res, err := it.Run(Input{Packet: pkt}, maps)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range res.Calls {
				if c.Map == "" {
					continue
				}
				typ := maps.byName[c.Map].typ.String()
				want, ok := model.Names(typ, c.Op)
				if !ok {
					t.Fatalf("%s: %s on %s map %s is not in pcv.yaml", name(p), c.Op, typ, c.Map)
				}
				var got []string
				for _, v := range c.PCV {
					got = append(got, v.Name)
				}
				if !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
					t.Fatalf("%s: %s on %s reported %v, pcv.yaml says %v", name(p), c.Op, typ, got, want)
				}
				seen[typ+"."+c.Op] = true
			}
		}
	}
	t.Logf("operations seen: %v", seen)
}
