package dist

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/dpperf/dpperf/stats"
)

// Percentiles returns p0, p1, ..., p100 of costs (101 values) by dpperf's
// one definition (package stats: with the n costs sorted ascending, the
// value at rank (n−1)·p/100, interpolated linearly between neighbours);
// p0 is the smallest cost and p100 the largest. costs is not modified. It
// fails on no costs or on NaN.
func Percentiles(costs []float64) ([]float64, error) {
	s, err := sorted(costs)
	if err != nil {
		return nil, err
	}
	out := make([]float64, 101)
	for p := range out {
		out[p] = rank(s, float64(p))
	}
	return out, nil
}

// Percentile returns the p-th percentile (0 ≤ p ≤ 100, fractions allowed,
// e.g. 99.9) of costs, as Percentiles.
func Percentile(costs []float64, p float64) (float64, error) {
	if !(p >= 0 && p <= 100) {
		return 0, fmt.Errorf("percentile %v outside 0..100", p)
	}
	s, err := sorted(costs)
	if err != nil {
		return 0, err
	}
	return rank(s, p), nil
}

func sorted(costs []float64) ([]float64, error) {
	if len(costs) == 0 {
		return nil, errors.New("percentiles of no costs")
	}
	if slices.ContainsFunc(costs, math.IsNaN) {
		return nil, errors.New("percentiles of costs with NaN")
	}
	s := slices.Clone(costs)
	slices.Sort(s)
	return s, nil
}

// rank is the p-th percentile of sorted s.
func rank(s []float64, p float64) float64 { return stats.Percentile(s, p) }
