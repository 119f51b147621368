package dist

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// Percentiles returns p0, p1, ..., p100 of costs (101 values) by the
// nearest-rank method: with the n costs sorted ascending, the p-th
// percentile is the value at rank ceil(p/100 · n) (1-based), and p0 is the
// smallest. Every percentile is therefore a cost that occurred, and at
// least p% of the costs are at most it. costs is not modified. It fails on
// no costs or on NaN.
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
// e.g. 99.9) of costs by nearest rank, as Percentiles.
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

// rank is the nearest-rank percentile of sorted s.
func rank(s []float64, p float64) float64 {
	r := int(math.Ceil(p / 100 * float64(len(s))))
	return s[min(max(r, 1), len(s))-1]
}
