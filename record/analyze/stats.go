package analyze

import (
	"math"
	"math/bits"
	"sort"

	"github.com/dpperf/dpperf/stats"
)

// Summary describes a set of durations in nanoseconds.
type Summary struct {
	Count uint64  `json:"count"`
	Mean  float64 `json:"mean_ns"`
	Min   uint64  `json:"min_ns"`
	P50   uint64  `json:"p50_ns"`
	P90   uint64  `json:"p90_ns"`
	P99   uint64  `json:"p99_ns"`
	Max   uint64  `json:"max_ns"`
	Total uint64  `json:"total_ns"`
	// Histogram has one bin per power of two from the bin of Min to the bin
	// of Max: bin [Lo, 2·Lo), or [0, 1) for zero.
	Histogram []Bin `json:"histogram"`
}

// Bin is one histogram bin: Count values v with Lo ≤ v < Hi.
type Bin struct {
	Lo    uint64 `json:"lo_ns"`
	Hi    uint64 `json:"hi_ns"`
	Count uint64 `json:"count"`
}

// Summarize computes the summary of v, which it sorts. Percentiles follow
// dpperf's one definition (package stats: linear interpolation between
// the closest ranks), rounded to the nanosecond.
func Summarize(v []uint64) Summary {
	if len(v) == 0 {
		return Summary{}
	}
	sort.Slice(v, func(i, j int) bool { return v[i] < v[j] })
	s := Summary{Count: uint64(len(v)), Min: v[0], Max: v[len(v)-1]}
	for _, x := range v {
		s.Total += x
	}
	s.Mean = float64(s.Total) / float64(len(v))
	rank := func(p float64) uint64 {
		return uint64(math.Round(stats.Interpolate(len(v), p, func(i int) float64 { return float64(v[i]) })))
	}
	s.P50, s.P90, s.P99 = rank(50), rank(90), rank(99)
	lo, hi := bits.Len64(s.Min), bits.Len64(s.Max)
	s.Histogram = make([]Bin, 0, hi-lo+1)
	for b := lo; b <= hi; b++ {
		bin := Bin{}
		if b > 0 {
			bin.Lo = 1 << (b - 1)
		}
		bin.Hi = 1 << b
		s.Histogram = append(s.Histogram, bin)
	}
	for _, x := range v {
		s.Histogram[bits.Len64(x)-lo].Count++
	}
	return s
}
