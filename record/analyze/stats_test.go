package analyze

import (
	"math/rand/v2"
	"testing"
)

// TestSummarizeKnownAnswer: 1..100 by the one percentile definition: p50
// 50.5 (rounded to 51 ns), p90 90.1, p99 99.01.
func TestSummarizeKnownAnswer(t *testing.T) {
	v := []uint64{}
	for i := uint64(1); i <= 100; i++ {
		v = append(v, 101-i) // 100..1, unsorted
	}
	s := Summarize(v)
	if s.Count != 100 || s.Min != 1 || s.Max != 100 || s.Mean != 50.5 || s.P50 != 51 || s.P90 != 90 || s.P99 != 99 || s.Total != 5050 {
		t.Errorf("summary %+v", s)
	}
	// Bins: [1,2) holds 1; [2,4) 2,3; [4,8) 4..7; ... [64,128) 64..100.
	want := []Bin{{1, 2, 1}, {2, 4, 2}, {4, 8, 4}, {8, 16, 8}, {16, 32, 16}, {32, 64, 32}, {64, 128, 37}}
	if len(s.Histogram) != len(want) {
		t.Fatalf("histogram %+v", s.Histogram)
	}
	for i := range want {
		if s.Histogram[i] != want[i] {
			t.Errorf("bin %d = %+v, want %+v", i, s.Histogram[i], want[i])
		}
	}
	if one := Summarize([]uint64{7}); one.P50 != 7 || one.P99 != 7 || len(one.Histogram) != 1 || one.Histogram[0].Count != 1 {
		t.Errorf("single value: %+v", one)
	}
	if empty := Summarize(nil); empty.Count != 0 || empty.Histogram != nil {
		t.Errorf("empty: %+v", empty)
	}
}

// TestSummarizeProperties checks invariants on random samples.
func TestSummarizeProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for n := 1; n < 300; n += 7 {
		v := make([]uint64, n)
		for i := range v {
			v[i] = r.Uint64N(1 << r.UintN(40))
		}
		s := Summarize(v)
		if !(s.Min <= s.P50 && s.P50 <= s.P90 && s.P90 <= s.P99 && s.P99 <= s.Max) {
			t.Fatalf("percentiles out of order: %+v", s)
		}
		if s.Mean < float64(s.Min) || s.Mean > float64(s.Max) {
			t.Fatalf("mean outside [min, max]: %+v", s)
		}
		var total uint64
		for _, b := range s.Histogram {
			total += b.Count
		}
		if total != uint64(n) {
			t.Fatalf("histogram holds %d of %d values", total, n)
		}
	}
}
