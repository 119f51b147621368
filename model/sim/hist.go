package sim

import "math"

// hist is a weighted histogram of latencies with buckets 1% apart from
// 1 ns to 1000 s, so quantiles are exact to within 1%.
type hist struct {
	w     []float64
	total float64
	sum   float64
}

const (
	histMin   = 1e-9
	histRatio = 1.01
)

var histN = int(math.Ceil(math.Log(1e12)/math.Log(histRatio))) + 2

func newHist() *hist { return &hist{w: make([]float64, histN)} }

func (h *hist) add(x, w float64) {
	h.total += w
	h.sum += w * x
	i := 0
	if x > histMin {
		i = int(math.Log(x/histMin)/math.Log(histRatio)) + 1
	}
	if i >= len(h.w) {
		i = len(h.w) - 1
	}
	h.w[i] += w
}

// mean returns the weighted mean.
func (h *hist) mean() float64 {
	if h.total == 0 {
		return math.NaN()
	}
	return h.sum / h.total
}

// quantile returns the q-quantile (upper edge of its bucket).
func (h *hist) quantile(q float64) float64 {
	if h.total == 0 {
		return math.NaN()
	}
	acc := 0.0
	for i, w := range h.w {
		acc += w
		if acc >= q*h.total {
			if i == 0 {
				return histMin
			}
			return histMin * math.Pow(histRatio, float64(i))
		}
	}
	return math.Inf(1)
}
