package target

import (
	"fmt"
	"slices"

	"go.yaml.in/yaml/v3"
)

// Outcomes of the map helpers whose cost depends on what they find: the
// Helpers table prices each call by its dearest outcome, HelperOutcomes by
// the one a path takes where it is known.
const (
	OutcomeHit     = "hit"     // a lookup or delete finds its key
	OutcomeMiss    = "miss"    // a lookup or delete does not
	OutcomeReplace = "replace" // an update overwrites an element
	OutcomeInsert  = "insert"  // an update adds one
)

// helperOutcomes names the outcomes of each helper that has them.
var helperOutcomes = map[string][]string{
	"map_lookup_elem": {OutcomeHit, OutcomeMiss},
	"map_update_elem": {OutcomeReplace, OutcomeInsert},
	"map_delete_elem": {OutcomeHit, OutcomeMiss},
}

// Outcomes lists the outcomes a helper (kernel name without bpf_) is
// priced by in HelperOutcomes, its main one first; nil for helpers that
// have none.
func Outcomes(helper string) []string { return helperOutcomes[helper] }

// HelperOutcomeCost prices a helper call on a map of the given type and
// key size that takes a known outcome, where the target has a cost for it
// (HelperOutcomes; ok false otherwise). The outcome's saving over the
// dearest outcome (Helpers) is taken off HelperKeyCost's price, so the
// cost never exceeds what a call whose outcome is unknown is priced at.
func (t *Target) HelperOutcomeCost(helper, mapType string, keyBytes int, outcome string) (v Vec, ok bool) {
	o, ok := t.HelperOutcomes[helper][mapType][outcome]
	if !ok {
		return v, false
	}
	keyed, _, _ := t.HelperKeyCost(helper, mapType, keyBytes)
	dearest, _ := t.HelperCost(helper, mapType)
	for c := range v {
		v[c] = max(0, keyed[c]-max(0, dearest[c]-o[c]))
	}
	return v, true
}

// outcomesYAML is helper → map type → outcome → cost.
type outcomesYAML map[string]map[string]map[string]costMap

func (f *file) helperOutcomes(t *Target) error {
	t.HelperOutcomes = map[string]map[string]map[string]Vec{}
	for helper, byType := range f.HelperOutcomes {
		names := Outcomes(helper)
		if names == nil {
			return fmt.Errorf("helper_outcomes: helper %q has no outcomes (only map_lookup_elem, map_update_elem, map_delete_elem)", helper)
		}
		t.HelperOutcomes[helper] = map[string]map[string]Vec{}
		for mt, byOutcome := range byType {
			t.HelperOutcomes[helper][mt] = map[string]Vec{}
			dearest, _ := t.HelperCost(helper, mt)
			for name, c := range byOutcome {
				what := fmt.Sprintf("helper_outcomes.%s.%s.%s", helper, mt, name)
				if !slices.Contains(names, name) {
					return fmt.Errorf("line %d: %s: unknown outcome (%s has %v)", c.line, what, helper, names)
				}
				v, err := t.vecOf(what, c)
				if err != nil {
					return err
				}
				for i := range v {
					if v[i] > dearest[i] {
						return fmt.Errorf("line %d: %s: dearer than helpers.%s, which must price the dearest outcome", c.line, what, helper)
					}
				}
				t.HelperOutcomes[helper][mt][name] = v
			}
		}
	}
	return nil
}

func (t *Target) helperOutcomesNode() *yaml.Node {
	n := mapping(false)
	for _, h := range keys(t.HelperOutcomes) {
		byType := mapping(false)
		for _, mt := range keys(t.HelperOutcomes[h]) {
			byOutcome := mapping(true)
			for _, name := range Outcomes(h) {
				if v, ok := t.HelperOutcomes[h][mt][name]; ok {
					add(byOutcome, name, t.vec(v))
				}
			}
			add(byType, mt, byOutcome)
		}
		add(n, h, byType)
	}
	return n
}
