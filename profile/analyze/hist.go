package analyze

import (
	"math"
	"math/bits"

	"github.com/dpperf/dpperf/stats"
)

// Hist is a log-linear histogram of non-negative durations in ns. Values
// below 256 are exact; above, each power of two is split into 128 buckets,
// so a percentile read from it is within 0.8% of the true sample value.
// Count, sum, min and max are exact. Memory is fixed (about 58 KiB) and
// histograms merge by addition, which is what lets analysis shard over
// cores.
type Hist struct {
	counts   []uint64
	n        uint64
	sum      float64
	min, max int64
}

const (
	histSub     = 128
	histBuckets = 256 + 56*histSub
)

func bucketOf(v int64) int {
	if v < 256 {
		return int(v)
	}
	shift := bits.Len64(uint64(v)) - 8
	return 256 + (shift-1)*histSub + int(uint64(v)>>shift) - histSub
}

// bucketLow returns the smallest value of bucket b and its width.
func bucketLow(b int) (int64, int64) {
	if b < 256 {
		return int64(b), 1
	}
	shift := (b-256)/histSub + 1
	m := int64((b-256)%histSub + histSub)
	return m << shift, 1 << shift
}

// Add records one value; negative values count as 0.
func (h *Hist) Add(v int64) {
	if v < 0 {
		v = 0
	}
	if h.counts == nil {
		h.counts = make([]uint64, histBuckets)
		h.min, h.max = v, v
	}
	h.counts[bucketOf(v)]++
	h.n++
	h.sum += float64(v)
	h.min = min(h.min, v)
	h.max = max(h.max, v)
}

// Merge adds o into h.
func (h *Hist) Merge(o *Hist) {
	if o.n == 0 {
		return
	}
	if h.counts == nil {
		h.counts = make([]uint64, histBuckets)
		h.min, h.max = o.min, o.max
	}
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.n += o.n
	h.sum += o.sum
	h.min = min(h.min, o.min)
	h.max = max(h.max, o.max)
}

// Count returns the number of values.
func (h *Hist) Count() uint64 { return h.n }

// Sum returns the exact sum of the values.
func (h *Hist) Sum() float64 { return h.sum }

// Mean returns the exact mean, or 0 when empty.
func (h *Hist) Mean() float64 {
	if h.n == 0 {
		return 0
	}
	return h.sum / float64(h.n)
}

// Min returns the smallest value (0 when empty).
func (h *Hist) Min() int64 { return h.min }

// Max returns the largest value (0 when empty).
func (h *Hist) Max() int64 { return h.max }

// Quantile returns the value at quantile q (0..1) by dpperf's one
// definition of a percentile (package stats: linear interpolation between
// closest ranks), each value taken as the middle of its bucket clamped to
// [min, max], rounded to a nanosecond; 0 when empty.
func (h *Hist) Quantile(q float64) int64 {
	if h.n == 0 {
		return 0
	}
	var buckets []stats.Bucket
	for b, c := range h.counts {
		if c > 0 {
			lo, w := bucketLow(b)
			v := min(max(lo+(w-1)/2, h.min), h.max)
			buckets = append(buckets, stats.Bucket{Value: float64(v), Count: c})
		}
	}
	return int64(math.Round(stats.HistogramPercentile(buckets, 100*q)))
}

// Buckets calls fn for each non-empty bucket in increasing order with its
// upper bound (exclusive) and count; used for Prometheus histograms and
// DIST reports.
func (h *Hist) Buckets(fn func(upper int64, count uint64)) {
	for b, c := range h.counts {
		if c > 0 {
			lo, w := bucketLow(b)
			fn(lo+w, c)
		}
	}
}

// CountAtMost returns, for each bound (ns, increasing), how many values
// are ≤ bound, counting a whole bucket as below a bound when its lowest
// value is (so within the 0.8% bucket resolution).
func (h *Hist) CountAtMost(bounds []int64) []uint64 {
	out := make([]uint64, len(bounds))
	var cum uint64
	j := 0
	for b, c := range h.counts {
		if c == 0 {
			continue
		}
		lo, _ := bucketLow(b)
		for j < len(bounds) && lo > bounds[j] {
			out[j] = cum
			j++
		}
		cum += c
	}
	for ; j < len(bounds); j++ {
		out[j] = cum
	}
	return out
}
