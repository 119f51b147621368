package calibrate

import (
	"testing"

	"github.com/dpperf/dpperf/target"
)

// outcomeResult is a calibration of hash-map helpers with distinct
// outcomes: a lookup hit (at three key sizes) and miss, an update replace
// and insert, a delete hit and miss; its medians are half its highs.
func outcomeResult() *Result {
	m := func(key, variant string, high float64) *Measurement {
		return &Measurement{Key: key, Variant: variant, Spread: target.Spread{Min: high / 4, Median: high / 2, High: high, Max: high, Variant: variant}}
	}
	return &Result{Options: Options{Runs: 1, Percentile: 90}, Measurements: []*Measurement{
		m("helpers.map_lookup_elem.hash", "key4", 18),
		m("helpers.map_lookup_elem.hash", "key16", 23),
		m("helpers.map_lookup_elem.hash", "key40", 36),
		m("helpers.map_lookup_elem.hash", "miss", 28),
		m("helpers.map_update_elem.hash", "key40", 60),
		m("helpers.map_update_elem.hash", "insert", 80),
		m("helpers.map_delete_elem.hash", "key40", 50),
		m("helpers.map_delete_elem.hash", "miss", 30),
		m("helpers.map_lookup_elem.lru_hash", "", 30),
		m("helpers.map_lookup_elem.lru_hash", "miss", 34),
		m("helpers.map_lookup_elem.array", "", 1),
	}}
}

// TestTargetOutcomePrices: each outcome is priced by its own variant (the
// main one with the largest key), its spread kept under its own key, the
// helper's cost stays the dearest; a map type with one outcome measured
// gets none.
func TestTargetOutcomePrices(t *testing.T) {
	tg, err := outcomeResult().Target("t", Throughput)
	if err != nil {
		t.Fatal(err)
	}
	want := map[[3]string]float64{
		{"map_lookup_elem", "hash", "hit"}: 36, {"map_lookup_elem", "hash", "miss"}: 28,
		{"map_update_elem", "hash", "replace"}: 60, {"map_update_elem", "hash", "insert"}: 80,
		{"map_delete_elem", "hash", "hit"}: 50, {"map_delete_elem", "hash", "miss"}: 30,
		{"map_lookup_elem", "lru_hash", "hit"}: 30, {"map_lookup_elem", "lru_hash", "miss"}: 34,
	}
	for k, w := range want {
		if got := tg.HelperOutcomes[k[0]][k[1]][k[2]][0]; got != w {
			t.Errorf("%v: %g, want %g", k, got, w)
		}
		s, ok := tg.Calibration.Spread[outcomeKey(k[0], k[1], k[2])]
		if !ok || s.High != w {
			t.Errorf("%v: spread %+v, want high %g", k, s, w)
		}
		if dearest := tg.Helpers[k[0]][k[1]][0]; w > dearest {
			t.Errorf("%v: %g above the helper's %g", k, w, dearest)
		}
	}
	if got := tg.Helpers["map_update_elem"]["hash"][0]; got != 80 {
		t.Errorf("hash update %g, want the insert's 80", got)
	}
	if _, ok := tg.HelperOutcomes["map_lookup_elem"]["array"]; ok {
		t.Error("outcomes for an array, which measured one")
	}
	back, err := target.Parse(mustMarshal(t, tg))
	if err != nil {
		t.Fatal(err)
	}
	if got := back.HelperOutcomes["map_lookup_elem"]["hash"]["miss"][0]; got != 28 {
		t.Errorf("written and read back: miss %g", got)
	}
}

// TestExpectedOutcomes: the expected target prices every outcome at its
// median, the guarantee at its high percentile.
func TestExpectedOutcomes(t *testing.T) {
	tg, err := outcomeResult().Target("t", Throughput)
	if err != nil {
		t.Fatal(err)
	}
	tg.Basis = target.BasisCalibrated
	e, err := Expected(tg)
	if err != nil || e == nil {
		t.Fatalf("Expected = %v, %v", e, err)
	}
	for h, byType := range tg.HelperOutcomes {
		for mt, byOutcome := range byType {
			for o, v := range byOutcome {
				got, ok := e.HelperOutcomes[h][mt][o]
				if !ok || got[0] != RoundUp(v[0]/2, floor) {
					t.Errorf("%s.%s.%s: expected %v, want the median %g", h, mt, o, got, v[0]/2)
				}
			}
		}
	}
	if got := e.Helpers["map_update_elem"]["hash"][0]; got != 40 {
		t.Errorf("expected hash update %g, want the insert's median 40", got)
	}
}

func mustMarshal(t *testing.T, tg *target.Target) []byte {
	t.Helper()
	data, err := target.Marshal(tg)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
