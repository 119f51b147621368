package stats

import (
	"math"
	"testing"
)

// Known answers of R's quantile(x, type = 7) and NumPy's percentile.
func TestPercentileKnownAnswers(t *testing.T) {
	cases := []struct {
		s    []float64
		p    float64
		want float64
	}{
		{[]float64{7}, 50, 7},
		{[]float64{1, 2, 3, 4}, 50, 2.5},
		{[]float64{1, 2, 3, 4}, 25, 1.75},
		{[]float64{1, 2, 3, 4}, 90, 3.7},
		{[]float64{1, 2, 3, 4}, 0, 1},
		{[]float64{1, 2, 3, 4}, 100, 4},
		{[]float64{15, 20, 35, 40, 50}, 40, 29},
		{[]float64{15, 20, 35, 40, 50}, 50, 35},
		{[]float64{0, 10}, 99.9, 9.99},
	}
	for _, c := range cases {
		if got := Percentile(c.s, c.p); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("p%g of %v = %g, want %g", c.p, c.s, got, c.want)
		}
	}
	for _, p := range []float64{-1, 100.5, math.NaN()} {
		if got := Percentile([]float64{1}, p); !math.IsNaN(got) {
			t.Errorf("p%g = %g, want NaN", p, got)
		}
	}
	if got := Percentile(nil, 50); !math.IsNaN(got) {
		t.Errorf("p50 of nothing = %g", got)
	}
}

// A histogram gives what Percentile gives over its values, each taken as
// its bucket's representative.
func TestHistogramPercentileMatchesValues(t *testing.T) {
	buckets := []Bucket{{1, 2}, {5, 0}, {10, 3}, {100, 1}}
	values := []float64{1, 1, 10, 10, 10, 100}
	for _, p := range []float64{0, 10, 25, 50, 70, 90, 99, 100} {
		if got, want := HistogramPercentile(buckets, p), Percentile(values, p); got != want {
			t.Errorf("p%g: histogram %g, values %g", p, got, want)
		}
	}
	if got := HistogramPercentile(buckets, 50); got != 10 {
		t.Errorf("p50 = %g, want 10", got)
	}
	if got := HistogramPercentile(buckets, 90); got != 55 {
		t.Errorf("p90 = %g, want 55 (halfway from 10 to 100)", got)
	}
	if got := HistogramPercentile(nil, 50); !math.IsNaN(got) {
		t.Errorf("empty histogram: %g", got)
	}
}
