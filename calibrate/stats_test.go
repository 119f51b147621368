package calibrate

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dpperf/dpperf/target"
)

// TestPercentileKnown: values from NumPy's percentile (linear method).
func TestPercentileKnown(t *testing.T) {
	xs := []float64{15, 20, 35, 40, 50}
	for _, c := range []struct{ p, want float64 }{
		{0, 15}, {25, 20}, {40, 29}, {50, 35}, {90, 46}, {100, 50},
	} {
		if got := Percentile(xs, c.p); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("p%g = %g, want %g", c.p, got, c.want)
		}
	}
	if got := Percentile([]float64{3, 1, 2, 10}, 90); math.Abs(got-7.9) > 1e-12 {
		t.Errorf("unsorted p90 = %g, want 7.9", got)
	}
	if got := Percentile([]float64{7}, 90); got != 7 {
		t.Errorf("one value: %g", got)
	}
	if !math.IsNaN(Percentile(nil, 50)) {
		t.Error("no values: want NaN")
	}
}

func TestSummarizeKnown(t *testing.T) {
	// Five runs of a difference: (full − base) / k with k = 100.
	base := []float64{1000, 1010, 990, 1000, 1200}
	full := []float64{1250, 1262, 1240, 1249, 1480}
	var runs []float64
	for i := range base {
		runs = append(runs, PerOp(base[i], full[i], 100))
	}
	got := Summarize(runs, 90)
	want := target.Spread{Min: 2.49, Median: 2.5, High: 2.688, Max: 2.8}
	for _, c := range []struct {
		what      string
		got, want float64
	}{{"min", got.Min, want.Min}, {"median", got.Median, want.Median}, {"high", got.High, want.High}, {"max", got.Max, want.Max}} {
		if math.Abs(c.got-c.want) > 1e-9 {
			t.Errorf("%s %g, want %g", c.what, c.got, c.want)
		}
	}
}

// TestPercentileProperties: monotone in p, between min and max, and
// independent of the order of the values.
func TestPercentileProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		xs := make([]float64, 1+r.IntN(40))
		for i := range xs {
			xs[i] = r.NormFloat64()*10 + 5
		}
		prev := math.Inf(-1)
		for p := 0.0; p <= 100; p += 2.5 {
			v := Percentile(xs, p)
			if v < prev || v < Percentile(xs, 0) || v > Percentile(xs, 100) {
				t.Fatalf("p%g = %g not monotone or out of range (%v)", p, v, xs)
			}
			prev = v
		}
		ys := append([]float64(nil), xs...)
		r.Shuffle(len(ys), func(i, j int) { ys[i], ys[j] = ys[j], ys[i] })
		if Percentile(xs, 90) != Percentile(ys, 90) {
			t.Fatal("depends on order")
		}
	}
}

func TestRoundUp(t *testing.T) {
	for _, c := range []struct{ x, want float64 }{
		{1.23, 1.23}, {1.231, 1.24}, {0.12301, 0.124}, {123.4, 124}, {15, 15}, {-3, 0.01}, {0.001, 0.01}, {1234.5, 1240},
		{0.8250000000000001, 0.825}, {0.8250001, 0.826},
	} {
		if got := RoundUp(c.x, 0.01); math.Abs(got-c.want) > 1e-12 || got < c.x*(1-NoiseTolerance) {
			t.Errorf("RoundUp(%g) = %g, want %g", c.x, got, c.want)
		}
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 10000 {
		x := math.Exp(r.Float64()*20 - 10)
		if got := RoundUp(x, 0); got < x*(1-NoiseTolerance) || got > x*1.01 {
			t.Fatalf("RoundUp(%g) = %g", x, got)
		}
	}
}

// TestTargetHelperKeys writes a key-size table for a helper measured at
// several key sizes, in ascending size with their spreads, and none for one
// measured at a single size.
func TestTargetHelperKeys(t *testing.T) {
	m := func(key, variant string, high float64) *Measurement {
		return &Measurement{Key: key, Variant: variant, Spread: target.Spread{Min: high / 2, Median: high, High: high, Max: high}}
	}
	res := &Result{Options: Options{Runs: 1, Percentile: 90}, Measurements: []*Measurement{
		m("helpers.map_lookup_elem.hash", "key40", 36),
		m("helpers.map_lookup_elem.hash", "key4", 18),
		m("helpers.map_lookup_elem.hash", "key16", 23),
		m("helpers.map_update_elem.hash", "key40", 80),
	}}
	tg, err := res.Target("t", Throughput)
	if err != nil {
		t.Fatal(err)
	}
	ks := tg.HelperKeys["map_lookup_elem"]["hash"]
	if len(ks) != 3 || ks[0].Bytes != 4 || ks[0].Cost[0] != 18 || ks[2].Bytes != 40 || ks[2].Cost[0] != 36 {
		t.Errorf("lookup table %v", ks)
	}
	if _, ok := tg.HelperKeys["map_update_elem"]; ok {
		t.Error("a table for a helper measured at one key size")
	}
	if _, ok := tg.Calibration.Spread["helper_keys.map_lookup_elem.hash.16"]; !ok {
		t.Error("no spread for the 16-byte lookup")
	}
	if got := tg.Helpers["map_lookup_elem"]["hash"][0]; got != 36 {
		t.Errorf("hash lookup without a key size %g, want the dearest 36", got)
	}
}

// TestTargetOutcomes: an outcome dearer than the hit with the largest key
// (here a miss, 4 ns dearer) prices the map type and raises every key
// size by the difference; a cheaper one changes nothing.
func TestTargetOutcomes(t *testing.T) {
	m := func(key, variant string, high float64) *Measurement {
		return &Measurement{Key: key, Variant: variant, Spread: target.Spread{Min: high / 2, Median: high, High: high, Max: high}}
	}
	res := &Result{Options: Options{Runs: 1, Percentile: 90}, Measurements: []*Measurement{
		m("helpers.map_lookup_elem.hash", "key40", 36),
		m("helpers.map_lookup_elem.hash", "key4", 18),
		m("helpers.map_lookup_elem.hash", "miss", 40),
		m("helpers.map_lookup_elem.lru_hash", "key40", 30),
		m("helpers.map_lookup_elem.lru_hash", "key4", 20),
		m("helpers.map_lookup_elem.lru_hash", "miss", 25),
	}}
	tg, err := res.Target("t", Throughput)
	if err != nil {
		t.Fatal(err)
	}
	if got := tg.Helpers["map_lookup_elem"]["hash"][0]; got != 40 {
		t.Errorf("hash lookup %g, want the miss's 40", got)
	}
	ks := tg.HelperKeys["map_lookup_elem"]["hash"]
	if len(ks) != 2 || ks[0].Cost[0] != 22 || ks[1].Cost[0] != 40 {
		t.Errorf("hash lookup by key size %v, want 22 and 40", ks)
	}
	ks = tg.HelperKeys["map_lookup_elem"]["lru_hash"]
	if len(ks) != 2 || ks[0].Cost[0] != 20 || ks[1].Cost[0] != 30 {
		t.Errorf("LRU lookup by key size %v, want 20 and 30 (the miss is cheaper)", ks)
	}
}
