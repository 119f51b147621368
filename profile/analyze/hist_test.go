package analyze

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/dpperf/dpperf/stats"
)

// Property: every quantile read from the histogram is within 0.8% (or 1ns)
// of the exact sample quantile (package stats), for several distributions.
func TestHistQuantileAccuracy(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	gens := map[string]func() int64{
		"uniform":     func() int64 { return rng.Int64N(1_000_000) },
		"exponential": func() int64 { return int64(rng.ExpFloat64() * 50_000) },
		"lognormal":   func() int64 { return int64(math.Exp(rng.NormFloat64()*2 + 10)) },
		"small":       func() int64 { return rng.Int64N(300) },
	}
	for name, gen := range gens {
		var h Hist
		vals := make([]int64, 20000)
		for i := range vals {
			vals[i] = gen()
			h.Add(vals[i])
		}
		slices.Sort(vals)
		for _, q := range []float64{0.001, 0.1, 0.5, 0.9, 0.99, 0.999, 1} {
			fv := make([]float64, len(vals))
			for i, v := range vals {
				fv[i] = float64(v)
			}
			exact := int64(math.Round(stats.Percentile(fv, 100*q)))
			got := h.Quantile(q)
			if d := math.Abs(float64(got - exact)); d > 1 && d > 0.008*float64(exact) {
				t.Errorf("%s q%.3f = %d, exact %d", name, q, got, exact)
			}
		}
		if h.Min() != vals[0] || h.Max() != vals[len(vals)-1] || h.Count() != uint64(len(vals)) {
			t.Errorf("%s: min/max/count %d %d %d", name, h.Min(), h.Max(), h.Count())
		}
	}
}

func TestHistKnownAnswers(t *testing.T) {
	var h Hist
	for v := int64(1); v <= 100; v++ {
		h.Add(v)
	}
	// Small values have buckets of one: p50 is 50.5 (rounded up), p10 10.9.
	if h.Quantile(0.5) != 51 || h.Quantile(0.99) != 99 || h.Quantile(0.1) != 11 || h.Mean() != 50.5 {
		t.Errorf("1..100: p50 %d p99 %d p10 %d mean %v", h.Quantile(0.5), h.Quantile(0.99), h.Quantile(0.1), h.Mean())
	}
	var e Hist
	if e.Quantile(0.5) != 0 || e.Mean() != 0 || e.Count() != 0 {
		t.Error("empty histogram not zero")
	}
	e.Add(-5)
	if e.Min() != 0 {
		t.Errorf("negative value recorded as %d", e.Min())
	}
}

// Property: merging two histograms equals adding all values to one.
func TestHistMerge(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var a, b, all Hist
	for i := 0; i < 5000; i++ {
		v := rng.Int64N(1 << 40)
		all.Add(v)
		if i%3 == 0 {
			a.Add(v)
		} else {
			b.Add(v)
		}
	}
	a.Merge(&b)
	for _, q := range []float64{0.1, 0.5, 0.99} {
		if a.Quantile(q) != all.Quantile(q) {
			t.Errorf("q%v merged %d, direct %d", q, a.Quantile(q), all.Quantile(q))
		}
	}
	if a.Count() != all.Count() || a.Sum() != all.Sum() || a.Min() != all.Min() || a.Max() != all.Max() {
		t.Error("merged totals differ")
	}
}

func TestBucketsRoundTrip(t *testing.T) {
	for _, v := range []int64{0, 1, 255, 256, 257, 511, 512, 1000, 123456789, math.MaxInt64} {
		b := bucketOf(v)
		lo, w := bucketLow(b)
		if v < lo || v > lo+w-1 {
			t.Errorf("value %d in bucket %d [%d, %d]", v, b, lo, lo+w-1)
		}
		if b >= histBuckets {
			t.Errorf("bucket %d out of range", b)
		}
	}
}

func TestCountAtMost(t *testing.T) {
	var h Hist
	for _, v := range []int64{500, 1000, 1500, 4000, 9000} {
		h.Add(v)
	}
	got := h.CountAtMost([]int64{999, 1000, 2000, 8000, 100000})
	want := []uint64{1, 2, 3, 4, 5}
	if !slices.Equal(got, want) {
		t.Errorf("CountAtMost = %v, want %v", got, want)
	}
}

func TestLog2Buckets(t *testing.T) {
	var h Hist
	for _, v := range []int64{3, 5, 6, 7, 100, 1000, 1000} {
		h.Add(v)
	}
	got := log2Buckets(&h)
	// 3 -> <4; 5,6,7 -> <8; 100 -> <128; 1000 twice -> <1024 (1000 lies in
	// the histogram bucket [1000, 1004), below 1024).
	want := []Bucket{{4, 1}, {8, 3}, {16, 0}, {32, 0}, {64, 0}, {128, 1}, {256, 0}, {512, 0}, {1024, 2}}
	if len(got) != len(want) {
		t.Fatalf("buckets %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("bucket %d = %v, want %v", i, got[i], want[i])
		}
	}
	var total uint64
	for _, b := range got {
		total += b.Count
	}
	if total != h.Count() {
		t.Errorf("buckets hold %d of %d values", total, h.Count())
	}
}
