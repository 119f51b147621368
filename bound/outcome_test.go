package bound

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dpperf/dpperf/bpfprog"
	"github.com/dpperf/dpperf/cfg"
	"github.com/dpperf/dpperf/internal/testobj"
	"github.com/dpperf/dpperf/smt"
	"github.com/dpperf/dpperf/symex"
	"github.com/dpperf/dpperf/target"
)

// outcomesTarget is the calibrated fixture whose hash lookups cost 34.8 ns
// at the dearest outcome, 30 on a hit and 20 on a miss.
const outcomesTarget = "../target/testdata/outcomes.yaml"

// sspOf searches the slowest satisfiable path of a built example.
func sspOf(t *testing.T, name, tgt string) (*Costed, *Result) {
	t.Helper()
	c := costed(t, name, tgt)
	r, err := SSP(context.Background(), c, SearchOptions{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	if r.Kind != "ssp" || len(r.Paths) != 1 {
		t.Fatalf("%s: %s result with %d paths", name, r.Kind, len(r.Paths))
	}
	return c, r
}

// TestOutcomeKnownAnswers: flowcount's slowest satisfiable path misses its
// flow and inserts it, and its lookup is priced with the miss figure (20 ns,
// 14.8 below the dearest outcome), its insert at the dearest update; counter's hits its source, priced with
// the hit figure (30 ns, 4.8 below). The bound's cost falls by exactly the
// saving, and the expected rate and a replay's check price the path the
// same way.
func TestOutcomeKnownAnswers(t *testing.T) {
	for _, c := range []struct {
		name, outcome string
		price, saving float64
	}{
		{"flowcount", target.OutcomeMiss, 20, 34.8 - 20},
		{"counter", target.OutcomeHit, 30, 34.8 - 30},
	} {
		co, r := sspOf(t, c.name, outcomesTarget)
		_, plain := sspOf(t, c.name, "../target/testdata/calibrated.yaml")
		pr := r.Paths[0]
		// flowcount's path inserts its flow after the miss, at the
		// dearest price: only the lookup saves.
		if n := len(pr.Lookups); n < 1 || n > 2 || n == 2 && pr.Lookups[1].Outcome != target.OutcomeInsert {
			t.Fatalf("%s: map operations %+v, want a lookup and at most an insert", c.name, pr.Lookups)
		}
		l := pr.Lookups[0]
		if l.Outcome != c.outcome || l.Priced != c.outcome || math.Abs(l.Cost["cpu"]-c.price) > 1e-6 {
			t.Errorf("%s: lookup %+v, want %s priced at %g", c.name, l, c.outcome, c.price)
		}
		if got, want := plain.Paths[0].Cost["cpu"]-pr.Cost["cpu"], c.saving; math.Abs(got-want) > 1e-6 {
			t.Errorf("%s: cost %g, without outcomes %g: saves %g, want %g", c.name, pr.Cost["cpu"], plain.Paths[0].Cost["cpu"], got, want)
		}
		var text, js strings.Builder
		if err := r.WriteText(&text); err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf("map lookup at insn %d in %s: %s, priced at %s (%g ns)", l.Insn, l.Map, c.outcome, c.outcome, c.price); !strings.Contains(text.String(), want) {
			t.Errorf("%s: text report lacks %q:\n%s", c.name, want, text.String())
		}
		if err := r.WriteJSON(&js); err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf(`"outcome": "%s",`, c.outcome); !strings.Contains(js.String(), want) || !strings.Contains(js.String(), `"priced_at"`) {
			t.Errorf("%s: JSON report lacks %s and priced_at", c.name, want)
		}
		if plain.Paths[0].Lookups != nil {
			t.Errorf("%s: lookups reported under a target without outcome prices", c.name)
		}
		if got := co.PacketRateWith(pr.Edges, pr.KnownLookups()); math.Abs(got-r.Bound.PacketRate) > 1e-6*got {
			t.Errorf("%s: the path with its example's outcomes at %g pps, the bound %g", c.name, got, r.Bound.PacketRate)
		}
		if got := co.PacketRateOf(pr.Edges); got >= r.Bound.PacketRate {
			t.Errorf("%s: at the dearest outcome %g pps, not below the bound's %g", c.name, got, r.Bound.PacketRate)
		}
	}
}

// TestOutcomeCostNeverExceedsExact: whatever outcomes a path's lookups
// take, their prices never raise a path above ExactCost (nor the
// enumeration's over-estimate), on many paths of every built example
// object, under a target that prices the outcomes of several map types,
// by key size too.
func TestOutcomeCostNeverExceedsExact(t *testing.T) {
	tg := mustTarget(t, outcomesTarget)
	vec := func(x float64) target.Vec { return target.Vec{x} }
	tg.HelperKeys = map[string]map[string][]target.KeyCost{"map_lookup_elem": {"hash": {{Bytes: 4, Cost: vec(18)}, {Bytes: 16, Cost: vec(23)}, {Bytes: 40, Cost: vec(34.8)}}}}
	for mt, o := range map[string][2]float64{"lru_hash": {31, 5}, "percpu_hash": {29.5, 29.5}, "array": {0.9, 0.1}, "percpu_array": {0.5, 1.2}} {
		tg.HelperOutcomes["map_lookup_elem"][mt] = map[string]target.Vec{target.OutcomeHit: vec(o[0]), target.OutcomeMiss: vec(o[1])}
	}
	objs, _ := filepath.Glob(filepath.Join(testobj.Root(), "build", "bpf", "*.o"))
	if len(objs) < 10 {
		t.Fatalf("%d built objects: run 'make bpf' first", len(objs))
	}
	checked, priced := 0, 0
	for _, obj := range objs {
		p, err := bpfprog.LoadFile(obj, "")
		if err != nil {
			continue // several programs, or none
		}
		g, err := cfg.Build(p, cfg.Options{})
		if err != nil {
			continue
		}
		c := Cost(g, tg)
		o, err := NewOrdered(c)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 300; i++ {
			path, ok := o.Next()
			if !ok {
				break
			}
			exact := c.ExactCost(path.Edges)
			for pattern := range 3 {
				cost, ls := c.OutcomeCost(path.Edges, patternLookups(g, path.Edges, pattern))
				for k := range cost {
					if cost[k] > exact[k]+1e-9 || cost[k] > path.Cost[k]+1e-9 {
						t.Fatalf("%s path %d: outcome cost %g above exact %g (edges %g)", filepath.Base(obj), i, cost[k], exact[k], path.Cost[k])
					}
				}
				for _, l := range ls {
					if l.Priced != pricedDearest {
						priced++
					}
				}
			}
			checked++
		}
	}
	t.Logf("%d paths, %d lookups priced by outcome", checked, priced)
	if checked < 1000 || priced == 0 {
		t.Fatalf("%d paths checked, %d lookups priced by outcome: too few to tell", checked, priced)
	}
}

// patternLookups gives a path's map operations outcomes by pattern: all
// keys found, none, or alternating.
func patternLookups(g *cfg.Graph, edges []int32, pattern int) []symex.Lookup {
	var out []symex.Lookup
	for _, e := range edges {
		for _, op := range g.Nodes[g.Edges[e].From].Ops {
			if op.Kind == cfg.OpHelper && pricedByOutcome(op.Helper) {
				found := pattern == 0 || pattern == 2 && len(out)%2 == 0
				out = append(out, symex.Lookup{Insn: int(op.Insn), Found: found})
			}
		}
	}
	return out
}

// TestOutcomeUpdatesKnownAnswers: examples/xdp/refresh.c writes a found
// source back with an update (replace), inserts a new one, and deletes one
// over budget; its first update, of a key no lookup tested, is left open.
// On every possible path the example's outcomes price the operations: the
// lookup at 30 ns on a hit and 20 on a miss, the replace at 50 and the
// insert at 81.3 (the dearest), the delete of a found key at 93.9 (the
// dearest too), the open update at the dearest, so that each path costs
// the known saving below ExactCost.
func TestOutcomeUpdatesKnownAnswers(t *testing.T) {
	g := graphOf(t, "refresh")
	c := Cost(g, mustTarget(t, outcomesTarget))
	ch, err := symex.NewChecker(g, symex.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Close()
	o, err := NewOrdered(c)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for {
		p, ok := o.Next()
		if !ok {
			break
		}
		out, err := ch.Check(context.Background(), p.Edges)
		if err != nil {
			t.Fatal(err)
		}
		if out.Result != smt.Sat {
			continue
		}
		ex, err := ch.Example(context.Background())
		if err != nil || ex == nil {
			t.Fatalf("example: %v, %v", ex, err)
		}
		cost, ls := c.OutcomeCost(p.Edges, ex.Lookups)
		saving := 0.0
		var outcomes []string
		for _, l := range ls {
			outcomes = append(outcomes, l.Map+":"+l.Helper+":"+l.Outcome)
			if l.Map == "last" && l.Outcome != outcomeUnknown {
				t.Errorf("the update of last, which no lookup tests, is %s", l.Outcome)
			}
			saving += map[string]float64{"hit/map_lookup_elem": 34.8 - 30, "miss/map_lookup_elem": 34.8 - 20,
				"replace/map_update_elem": 81.3 - 50}[l.Outcome+"/"+l.Helper]
		}
		key := strings.Join(outcomes, " ")
		seen[key] = true
		if got := c.ExactCost(p.Edges)[0] - cost[0]; math.Abs(got-saving) > 1e-6 {
			t.Errorf("path %s: saves %g ns, want %g", key, got, saving)
		}
	}
	for _, want := range []string{
		"last:map_update_elem:unknown budget:map_lookup_elem:hit budget:map_update_elem:replace",
		"last:map_update_elem:unknown budget:map_lookup_elem:miss budget:map_update_elem:insert",
		"last:map_update_elem:unknown budget:map_lookup_elem:hit budget:map_delete_elem:hit",
	} {
		if !seen[want] {
			t.Errorf("no path priced %s; priced %v", want, seen)
		}
	}
}
