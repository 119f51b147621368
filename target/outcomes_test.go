package target

import (
	"math"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestOutcomesFile: the calibrated fixture with outcome prices reads them,
// writes them back, and reads back the same target.
func TestOutcomesFile(t *testing.T) {
	tg, err := Load("testdata/outcomes.yaml")
	if err != nil {
		t.Fatal(err)
	}
	o := tg.HelperOutcomes["map_lookup_elem"]["hash"]
	if o[OutcomeHit][0] != 30 || o[OutcomeMiss][0] != 20 {
		t.Fatalf("lookup outcomes %v, want hit 30, miss 20", o)
	}
	data, err := Marshal(tg)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse(data)
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	if !reflect.DeepEqual(tg, back) {
		t.Fatalf("read back differs\n%#v\n%#v\n%s", tg, back, data)
	}
	if !strings.Contains(string(data), "hash: {hit: {cpu: 30}, miss: {cpu: 20}}") {
		t.Errorf("outcomes written as\n%s", data)
	}
}

// TestOutcomesChecked: outcome names belong to their helper, helpers
// without outcomes have none, and no outcome is dearer than the helper.
func TestOutcomesChecked(t *testing.T) {
	good, _ := os.ReadFile("targets/x86-64.yaml")
	for _, c := range []struct{ add, msg string }{
		{"helper_outcomes: {map_lookup_elem: {hash: {insert: {cpu: 1}}}}", "unknown outcome"},
		{"helper_outcomes: {ktime_get_ns: {default: {hit: {cpu: 1}}}}", "has no outcomes"},
		{"helper_outcomes: {map_lookup_elem: {hash: {miss: {cpu: 1e6}}}}", "dearer than helpers.map_lookup_elem"},
		{"helper_outcomes: {map_lookup_elem: {hash: {miss: {watts: 1}}}}", "unknown component"},
	} {
		_, err := Parse(append(slices.Clone(good), "\n"+c.add+"\n"...))
		if err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: error %v, want %q", c.add, err, c.msg)
		}
	}
}

// TestHelperOutcomeCost: an outcome's saving over the dearest is taken off
// the price by key size, never below zero and never above the price a call
// of unknown outcome pays; outcomes the target does not price are not ok.
func TestHelperOutcomeCost(t *testing.T) {
	tg, err := Load("x86-64")
	if err != nil {
		t.Fatal(err)
	}
	vec := func(x float64) Vec { return Vec{x} }
	tg.Helpers["map_lookup_elem"]["hash"] = vec(40)
	tg.HelperKeys = map[string]map[string][]KeyCost{"map_lookup_elem": {"hash": {{4, vec(22)}, {40, vec(40)}}}}
	tg.HelperOutcomes = map[string]map[string]map[string]Vec{"map_lookup_elem": {"hash": {OutcomeHit: vec(36), OutcomeMiss: vec(10)}}}
	for _, c := range []struct {
		key     int
		outcome string
		want    float64
		ok      bool
	}{
		{40, OutcomeHit, 36, true}, {40, OutcomeMiss, 10, true},
		{4, OutcomeHit, 18, true}, {4, OutcomeMiss, 0, true},
		{0, OutcomeHit, 36, true}, {40, OutcomeInsert, 0, false},
	} {
		got, ok := tg.HelperOutcomeCost("map_lookup_elem", "hash", c.key, c.outcome)
		if ok != c.ok || math.Abs(got[0]-c.want) > 1e-9 {
			t.Errorf("%d-byte key, %s: %v %v, want %g %v", c.key, c.outcome, got[0], ok, c.want, c.ok)
		}
		keyed, _, _ := tg.HelperKeyCost("map_lookup_elem", "hash", c.key)
		if got[0] > keyed[0] {
			t.Errorf("%d-byte key, %s: %g above the unknown outcome's %g", c.key, c.outcome, got[0], keyed[0])
		}
	}
	if _, ok := tg.HelperOutcomeCost("map_lookup_elem", "lru_hash", 4, OutcomeHit); ok {
		t.Error("a price for a map type without outcomes")
	}
	s := tg.Scaled(map[string]float64{GroupHelper: 0.5})
	if got := s.HelperOutcomes["map_lookup_elem"]["hash"][OutcomeMiss][0]; got != 5 {
		t.Errorf("scaled miss %g, want 5", got)
	}
	if tg.HelperOutcomes["map_lookup_elem"]["hash"][OutcomeMiss][0] != 10 {
		t.Error("Scaled changed the original")
	}
}

// TestMapWriteGroup: updates and deletes, by map type, key size and
// outcome, are the map_write group; lookups and PCVs stay helpers.
func TestMapWriteGroup(t *testing.T) {
	tg, err := Load("testdata/calibrated.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if tg.HelperOutcomes == nil {
		tg.HelperOutcomes = map[string]map[string]map[string]Vec{}
	}
	tg.HelperOutcomes["map_update_elem"] = map[string]map[string]Vec{"hash": {OutcomeInsert: {10}, OutcomeReplace: {5}}}
	w := tg.Scaled(map[string]float64{GroupMapWrite: 2})
	h := tg.Scaled(map[string]float64{GroupHelper: 2})
	for helper, byType := range tg.Helpers {
		for mt, v := range byType {
			write := helper == "map_update_elem" || helper == "map_delete_elem"
			if got, want := w.Helpers[helper][mt][0], v[0]*map[bool]float64{true: 2, false: 1}[write]; got != want {
				t.Errorf("map_write ×2: %s on %s = %g, want %g", helper, mt, got, want)
			}
			if got, want := h.Helpers[helper][mt][0], v[0]*map[bool]float64{true: 1, false: 2}[write]; got != want {
				t.Errorf("helper ×2: %s on %s = %g, want %g", helper, mt, got, want)
			}
		}
	}
	checked := 0
	for helper, byType := range tg.HelperOutcomes {
		for mt, byOutcome := range byType {
			for o, v := range byOutcome {
				if HelperGroup(helper) == GroupMapWrite {
					checked++
					if got := w.HelperOutcomes[helper][mt][o][0]; got != 2*v[0] {
						t.Errorf("map_write ×2: %s on %s, %s = %g, want %g", helper, mt, o, got, 2*v[0])
					}
				}
			}
		}
	}
	for mt, byName := range tg.PCV {
		for name, v := range byName {
			if w.PCV[mt][name][0] != v[0] || h.PCV[mt][name][0] != 2*v[0] {
				t.Errorf("PCV %s.%s: %g under map_write ×2, %g under helper ×2, want %g and %g", mt, name, w.PCV[mt][name][0], h.PCV[mt][name][0], v[0], 2*v[0])
			}
		}
	}
	if checked == 0 || HelperGroup("map_lookup_elem") != GroupHelper {
		t.Errorf("%d map-write outcomes checked; lookups in %s", checked, HelperGroup("map_lookup_elem"))
	}
}
