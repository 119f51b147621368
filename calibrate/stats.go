package calibrate

import (
	"math"
	"slices"
	"strconv"

	"github.com/dpperf/dpperf/stats"
	"github.com/dpperf/dpperf/target"
)

// Percentile returns the p-th percentile (0 ≤ p ≤ 100) of xs by dpperf's
// one definition (package stats: linear interpolation between closest
// ranks, R's type 7). It returns NaN for no values.
func Percentile(xs []float64, p float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return stats.Percentile(s, p)
}

// Summarize returns the spread of runs with high the p-th percentile.
func Summarize(runs []float64, p float64) target.Spread {
	return target.Spread{
		Min:    Percentile(runs, 0),
		Median: Percentile(runs, 50),
		High:   Percentile(runs, p),
		Max:    Percentile(runs, 100),
	}
}

// NoiseTolerance is the relative float noise RoundUp ignores: a rounded
// cost c of a measurement x satisfies c >= x*(1-NoiseTolerance).
const NoiseTolerance = 1e-11

// PerOp is the cost of one operation from the times of a program with
// base copies of it and one with base+k copies: (full − base) / k.
func PerOp(base, full float64, k int) float64 {
	return (full - base) / float64(k)
}

// RoundUp rounds x up to three significant digits, so a cost written to a
// file is never below the measured one; it returns at least floor. x is
// first cut to 12 significant digits: a difference of measured times
// carries float noise (0.8250000000000001 is 0.825), which must not push
// a cost to the next step. The result is therefore at least x less a
// relative NoiseTolerance, never less.
func RoundUp(x, floor float64) float64 {
	if x <= floor || math.IsNaN(x) {
		return floor
	}
	if cut, err := strconv.ParseFloat(strconv.FormatFloat(x, 'g', 12, 64), 64); err == nil {
		x = cut
	}
	e := math.Pow(10, math.Floor(math.Log10(x))-2)
	r := math.Ceil(x/e) * e
	// Undo the float error of the division (1.23/0.01 = 122.99999...).
	if s := math.Round(x/e) * e; s >= x {
		r = min(r, s)
	}
	// The nearest double to the three digits (not 85.30000000000001).
	if clean, err := strconv.ParseFloat(strconv.FormatFloat(r, 'g', 3, 64), 64); err == nil {
		r = clean
	}
	return r
}
