// Package stats holds dpperf's one definition of a percentile, used by
// every package that reports one (measure, calibrate, replay, classtime,
// profile, record/analyze).
//
// The p-th percentile of n values is the linearly interpolated quantile,
// type 7 of Hyndman and Fan (the default of R and NumPy): with the values
// sorted ascending as x0 ≤ … ≤ x(n−1), the rank is h = (n−1)·p/100 and the
// percentile x⌊h⌋ + (h−⌊h⌋)·(x⌈h⌉ − x⌊h⌋). p0 is the smallest value, p100
// the largest, p50 the median (the mean of the two middle values when n
// is even).
package stats

import "math"

// Percentile returns the p-th percentile (0 ≤ p ≤ 100) of the sorted
// values s, or NaN when s is empty or p is outside [0, 100].
func Percentile(s []float64, p float64) float64 {
	return Interpolate(len(s), p, func(i int) float64 { return s[i] })
}

// Interpolate is Percentile over n sorted values that at gives by their
// 0-based rank, for collections that do not hold every value (a
// histogram gives each value of a bucket as the bucket's representative).
func Interpolate(n int, p float64, at func(i int) float64) float64 {
	if n == 0 || !(p >= 0 && p <= 100) {
		return math.NaN()
	}
	h := float64(n-1) * p / 100
	lo := int(math.Floor(h))
	if lo >= n-1 {
		return at(n - 1)
	}
	x := at(lo)
	if f := h - float64(lo); f > 0 {
		x += f * (at(lo+1) - x)
	}
	return x
}

// Bucket is one bucket of a histogram: Count values, each represented by
// Value.
type Bucket struct {
	Value float64
	Count uint64
}

// HistogramPercentile returns the p-th percentile, by Percentile's
// definition, of the values of a histogram whose buckets are in increasing
// order, each value taken as its bucket's Value; NaN when it is empty.
func HistogramPercentile(buckets []Bucket, p float64) float64 {
	var n uint64
	for _, b := range buckets {
		n += b.Count
	}
	if n > math.MaxInt {
		return math.NaN()
	}
	// at is called with increasing ranks: a cursor finds each bucket.
	j, below := 0, uint64(0)
	return Interpolate(int(n), p, func(i int) float64 {
		for uint64(i) >= below+buckets[j].Count {
			below += buckets[j].Count
			j++
		}
		return buckets[j].Value
	})
}
