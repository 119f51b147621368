package rootcause

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// synth builds n samples with random distractor features; plant adds the
// cause to a sample's cost and features.
func synth(n int, seed uint64, plant func(r *rand.Rand, s *Sample)) []Sample {
	r := rand.New(rand.NewPCG(seed, 3))
	out := make([]Sample, n)
	for i := range out {
		s := Sample{Cost: 100 + 10*r.NormFloat64(), Bools: map[string]bool{}, Nums: map[string]float64{}}
		s.Bools["ipv6"] = r.IntN(2) == 0
		s.Bools["tcp"] = r.IntN(3) != 0
		s.Nums["pkt_len"] = float64(64 + r.IntN(1400))
		s.Nums["traversals"] = float64(r.IntN(3))
		plant(r, &s)
		out[i] = s
	}
	return out
}

// TestPlantedCondition: one condition adds 80 to the cost of 8% of the
// packets; another condition follows it 60% of the time. The planted one
// ranks first for the slowest 10%.
func TestPlantedCondition(t *testing.T) {
	samples := synth(5000, 1, func(r *rand.Rand, s *Sample) {
		hit := r.IntN(100) < 8
		s.Bools["flows.update"] = hit
		s.Bools["syn"] = hit && r.IntN(10) < 6 || !hit && r.IntN(20) == 0
		if hit {
			s.Cost += 80
		}
	})
	tab, err := Rank(samples, Slow{Percentile: 90})
	if err != nil {
		t.Fatal(err)
	}
	top := tab.Rows[0]
	if top.Name != "flows.update" || top.Kind != Bool {
		t.Fatalf("first row %+v, want flows.update\n%s", top, dump(tab))
	}
	if top.SlowShare < 0.75 || top.FastShare > 0.01 || top.Delta < 70 || top.Delta > 90 {
		t.Errorf("row %+v: shares or delta off", top)
	}
	if tab.Slow < 450 || tab.Slow > 550 || tab.Slow+tab.Fast != 5000 {
		t.Errorf("%d slow of %d, want about 10%%", tab.Slow, tab.Slow+tab.Fast)
	}
	if !strings.Contains(top.Explanation, "of slow packets") || strings.Contains(top.Explanation, "\n") {
		t.Errorf("explanation %q", top.Explanation)
	}
}

// TestPlantedPCV: the cost grows by 25 per element of a hash chain whose
// length varies; the chain length ranks first, with a slope near 25.
func TestPlantedPCV(t *testing.T) {
	samples := synth(4000, 2, func(r *rand.Rand, s *Sample) {
		chain := float64(r.IntN(2))
		if r.IntN(10) == 0 {
			chain = float64(3 + r.IntN(6))
		}
		s.Nums["bucket_len"] = chain
		s.Cost += 25 * chain
	})
	tab, err := Rank(samples, Slow{Threshold: 160})
	if err != nil {
		t.Fatal(err)
	}
	top := tab.Rows[0]
	if top.Name != "bucket_len" || top.Kind != Num {
		t.Fatalf("first row %+v, want bucket_len\n%s", top, dump(tab))
	}
	if math.Abs(top.Slope-25) > 1.5 || top.CostCorr < 0.8 || top.SlowMean <= top.FastMean {
		t.Errorf("row %+v: slope, correlation or means off", top)
	}
	if tab.Threshold != 160 {
		t.Errorf("threshold %v", tab.Threshold)
	}
}

// TestKnownScores: on four samples the scores and shares are exact.
func TestKnownScores(t *testing.T) {
	samples := []Sample{
		{Cost: 10, Bools: map[string]bool{"a": false, "b": true}, Nums: map[string]float64{"n": 1}},
		{Cost: 10, Bools: map[string]bool{"b": false}, Nums: map[string]float64{"n": 1}},
		{Cost: 30, Bools: map[string]bool{"a": true, "b": true}, Nums: map[string]float64{"n": 3}},
		{Cost: 30, Bools: map[string]bool{"a": true}},
	}
	tab, err := Rank(samples, Slow{Percentile: 50})
	if err != nil {
		t.Fatal(err)
	}
	if tab.Slow != 2 || tab.Threshold != 20 { // p50 of 10, 10, 30, 30
		t.Fatalf("%d slow above %v", tab.Slow, tab.Threshold)
	}
	byName := map[string]Row{}
	for _, r := range tab.Rows {
		byName[r.Name] = r
	}
	if tab.Rows[0].Name != "a" {
		t.Errorf("first %s", tab.Rows[0].Name)
	}
	a, b, n := byName["a"], byName["b"], byName["n"]
	if a.Score != 1 || a.SlowShare != 1 || a.FastShare != 0 || !math.IsInf(a.Lift, 1) || a.Delta != 20 {
		t.Errorf("a: %+v", a)
	}
	if b.Score != 0 || b.SlowShare != 0.5 || b.FastShare != 0.5 || b.Lift != 1 || b.Delta != 0 {
		t.Errorf("b: %+v", b)
	}
	if n.SlowMean != 1.5 || n.FastMean != 1 || math.Abs(n.Slope-40/19.0) > 1e-9 {
		t.Errorf("n: %+v", n)
	}
}

// TestRankErrors: definitions that leave no slow or no fast packet fail.
func TestRankErrors(t *testing.T) {
	same := []Sample{{Cost: 5}, {Cost: 5}, {Cost: 5}}
	for name, c := range map[string]struct {
		s    []Sample
		slow Slow
	}{
		"none":      {nil, Slow{Percentile: 90}},
		"all equal": {same, Slow{Percentile: 90}},
		"above all": {[]Sample{{Cost: 1}, {Cost: 2}}, Slow{Threshold: 5}},
		"bad pct":   {[]Sample{{Cost: 1}, {Cost: 2}}, Slow{Percentile: 100}},
		"NaN":       {[]Sample{{Cost: 1}, {Cost: math.NaN()}}, Slow{Threshold: 0}},
	} {
		if _, err := Rank(c.s, c.slow); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func dump(t *Table) string {
	var b strings.Builder
	for _, r := range t.Rows {
		b.WriteString(r.Name + " " + r.Explanation + "\n")
	}
	return b.String()
}
