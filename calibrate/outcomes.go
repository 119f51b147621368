package calibrate

import (
	"strconv"
	"strings"

	"github.com/dpperf/dpperf/target"
)

// outcomeKey is the spread key of a helper's outcome on a map type.
func outcomeKey(helper, mapType, outcome string) string {
	return "helper_outcomes." + helper + "." + mapType + "." + outcome
}

// deriveOutcomes prices the outcomes of the map helpers measured with
// more than one (outcomeBenches: a lookup's miss, an update's insert, a
// delete's miss beside the main variant, all with the largest key), as the
// target's HelperOutcomes, and keeps each outcome's spread under
// outcomeKey. The helpers' own costs stay the dearest outcome.
func (r *Result) deriveOutcomes(d *deriver, t *target.Target, vec func(float64) target.Vec) {
	type hm struct{ helper, mapType string }
	largest := map[hm]int{} // the largest key size measured, by variant keyN
	for _, m := range r.Measurements {
		h, ok := helperOf(m)
		if !ok {
			continue
		}
		if n, err := strconv.Atoi(strings.TrimPrefix(m.Variant, "key")); err == nil && strings.HasPrefix(m.Variant, "key") {
			largest[hm{h[0], h[1]}] = max(largest[hm{h[0], h[1]}], n)
		}
	}
	found := map[hm]map[string]*Measurement{}
	for _, m := range r.Measurements {
		h, ok := helperOf(m)
		names := target.Outcomes(h[0])
		if !ok || names == nil || m.Err != nil {
			continue
		}
		k := hm{h[0], h[1]}
		var outcome string
		switch {
		case m.Variant == names[1], m.Variant == names[1]+"_stream":
			outcome = names[1]
		case m.Variant == "" && largest[k] == 0, largest[k] > 0 && m.Variant == "key"+strconv.Itoa(largest[k]):
			outcome = names[0]
		default:
			continue // a smaller key, or a variant that is no outcome
		}
		if found[k] == nil {
			found[k] = map[string]*Measurement{}
		}
		if prev, ok := found[k][outcome]; !ok || m.Spread.High > prev.Spread.High {
			found[k][outcome] = m
		}
	}
	t.HelperOutcomes = map[string]map[string]map[string]target.Vec{}
	for k, byOutcome := range found {
		if len(byOutcome) < 2 {
			continue // one outcome: the helper's cost says it all
		}
		if t.HelperOutcomes[k.helper] == nil {
			t.HelperOutcomes[k.helper] = map[string]map[string]target.Vec{}
		}
		t.HelperOutcomes[k.helper][k.mapType] = map[string]target.Vec{}
		for outcome, m := range byOutcome {
			t.HelperOutcomes[k.helper][k.mapType][outcome] = vec(m.Spread.High)
			d.spread[outcomeKey(k.helper, k.mapType, outcome)] = m.Spread
		}
	}
}

// helperOf splits a measurement of a map helper ("helpers.H.M") into
// helper and map type.
func helperOf(m *Measurement) ([2]string, bool) {
	rest, ok := strings.CutPrefix(m.Key, "helpers.")
	if !ok {
		return [2]string{}, false
	}
	h, mt, ok := strings.Cut(rest, ".")
	return [2]string{h, mt}, ok
}
