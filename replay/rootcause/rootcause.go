package rootcause

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/gonum/stat"

	"github.com/dpperf/dpperf/replay/dist"
)

// Sample is one packet: its cost and its features. A boolean feature a
// sample does not name is false; a number it does not name is 0 (a PCV a
// packet never met, such as a chain it did not walk, costs it nothing).
type Sample struct {
	Cost  float64
	Bools map[string]bool
	Nums  map[string]float64
}

// Slow defines the slow packets: those costing more than Threshold, or,
// when Percentile is set (0 < Percentile < 100), more than that percentile
// of the costs (package stats) — Percentile 90 means the slowest 10%. When ties
// at the percentile leave no packet above it, the packets at it count as
// slow unless that is all of them.
type Slow struct {
	Threshold  float64
	Percentile float64
}

// Kind says whether a row is a condition or a number.
type Kind string

const (
	Bool Kind = "condition"
	Num  Kind = "pcv"
)

// Row is one ranked feature.
type Row struct {
	Name  string
	Kind  Kind
	Score float64 // correlation with being slow, in [-1, 1]
	// For conditions: the share of slow and of fast packets meeting it,
	// their ratio (Lift, +Inf when no fast packet meets it), and the mean
	// cost of packets meeting it minus that of the others (Delta; NaN
	// when all or none meet it).
	SlowShare, FastShare, Lift, Delta float64
	// For numbers: the mean among slow and among fast packets, the
	// correlation with the cost, and the least-squares cost per unit
	// (Slope; 0 when the number is constant).
	SlowMean, FastMean, CostCorr, Slope float64
	// Explanation says the row in one line.
	Explanation string
}

// Table is the ranking.
type Table struct {
	Threshold  float64 // cost above which a packet is slow
	Slow, Fast int     // packet counts
	Rows       []Row
}

// Rank ranks every feature any sample names. It fails on no samples, a
// NaN cost, or a definition that makes no packet slow or every packet
// slow.
func Rank(samples []Sample, slow Slow) (*Table, error) {
	if len(samples) == 0 {
		return nil, errors.New("root cause of no samples")
	}
	costs := make([]float64, len(samples))
	for i, s := range samples {
		costs[i] = s.Cost
	}
	th, isSlow, err := classify(costs, slow)
	if err != nil {
		return nil, err
	}
	t := &Table{Threshold: th}
	slowF := make([]float64, len(samples))
	for i, b := range isSlow {
		if b {
			slowF[i] = 1
			t.Slow++
		}
	}
	t.Fast = len(samples) - t.Slow
	bools, nums := names(samples)
	x := make([]float64, len(samples))
	for _, name := range bools {
		for i, s := range samples {
			x[i] = 0
			if s.Bools[name] {
				x[i] = 1
			}
		}
		t.Rows = append(t.Rows, boolRow(name, x, costs, isSlow, slowF, t))
	}
	for _, name := range nums {
		for i, s := range samples {
			x[i] = s.Nums[name]
		}
		t.Rows = append(t.Rows, numRow(name, x, costs, isSlow, slowF))
	}
	slices.SortStableFunc(t.Rows, func(a, b Row) int {
		if a.Score != b.Score {
			if a.Score > b.Score {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Name, b.Name)
	})
	return t, nil
}

// classify returns the threshold and which samples are slow.
func classify(costs []float64, slow Slow) (float64, []bool, error) {
	if slices.ContainsFunc(costs, math.IsNaN) {
		return 0, nil, errors.New("root cause: a cost is NaN")
	}
	th := slow.Threshold
	if slow.Percentile != 0 {
		if !(slow.Percentile > 0 && slow.Percentile < 100) {
			return 0, nil, fmt.Errorf("slow percentile %v outside (0, 100)", slow.Percentile)
		}
		th, _ = dist.Percentile(costs, slow.Percentile)
	}
	mark := func(atLeast bool) ([]bool, int) {
		s, n := make([]bool, len(costs)), 0
		for i, c := range costs {
			if c > th || atLeast && c == th {
				s[i] = true
				n++
			}
		}
		return s, n
	}
	s, n := mark(false)
	if n == 0 && slow.Percentile != 0 {
		s, n = mark(true)
	}
	if n == 0 || n == len(costs) {
		return 0, nil, fmt.Errorf("root cause: %d of %d packets cost more than %v; want some slow and some fast", n, len(costs), th)
	}
	return th, s, nil
}

func names(samples []Sample) (bools, nums []string) {
	b, n := map[string]bool{}, map[string]bool{}
	for _, s := range samples {
		for k := range s.Bools {
			b[k] = true
		}
		for k := range s.Nums {
			n[k] = true
		}
	}
	for k := range b {
		bools = append(bools, k)
	}
	for k := range n {
		nums = append(nums, k)
	}
	slices.Sort(bools)
	slices.Sort(nums)
	return bools, nums
}

// corr is Pearson's correlation, 0 when either side is constant.
func corr(x, y []float64) float64 {
	if constant(x) || constant(y) {
		return 0
	}
	return stat.Correlation(x, y, nil)
}

func constant(x []float64) bool {
	return !slices.ContainsFunc(x, func(v float64) bool { return v != x[0] })
}

func boolRow(name string, x, costs []float64, isSlow []bool, slowF []float64, t *Table) Row {
	r := Row{Name: name, Kind: Bool, Score: corr(x, slowF)}
	var inSlow, inFast, with, without float64
	var nWith int
	for i, v := range x {
		switch {
		case v == 1 && isSlow[i]:
			inSlow++
		case v == 1:
			inFast++
		}
		if v == 1 {
			with += costs[i]
			nWith++
		} else {
			without += costs[i]
		}
	}
	r.SlowShare, r.FastShare = inSlow/float64(t.Slow), inFast/float64(t.Fast)
	r.Lift = r.SlowShare / r.FastShare
	if r.FastShare == 0 && r.SlowShare == 0 {
		r.Lift = math.NaN()
	}
	r.Delta = math.NaN()
	if nWith > 0 && nWith < len(x) {
		r.Delta = with/float64(nWith) - without/float64(len(x)-nWith)
	}
	r.Explanation = fmt.Sprintf("met by %.0f%% of slow packets and %.0f%% of fast ones (lift %s); %s",
		100*r.SlowShare, 100*r.FastShare, num(r.Lift), deltaText(r.Delta))
	return r
}

func deltaText(d float64) string {
	switch {
	case math.IsNaN(d):
		return "met by every packet or none"
	case d >= 0:
		return fmt.Sprintf("packets meeting it cost %s more on average", num(d))
	default:
		return fmt.Sprintf("packets meeting it cost %s less on average", num(-d))
	}
}

func numRow(name string, x, costs []float64, isSlow []bool, slowF []float64) Row {
	r := Row{Name: name, Kind: Num, Score: corr(x, slowF), CostCorr: corr(x, costs)}
	var s, f, ns, nf float64
	for i, v := range x {
		if isSlow[i] {
			s, ns = s+v, ns+1
		} else {
			f, nf = f+v, nf+1
		}
	}
	r.SlowMean, r.FastMean = s/ns, f/nf
	if !constant(x) {
		_, r.Slope = stat.LinearRegression(x, costs, nil, false)
	}
	r.Explanation = fmt.Sprintf("mean %s among slow packets and %s among fast ones; correlation with cost %.2f, %s per unit",
		num(r.SlowMean), num(r.FastMean), r.CostCorr, signed(r.Slope))
	return r
}

// num prints a figure with up to three significant decimals.
func num(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "∞"
	case math.IsNaN(v):
		return "n/a"
	}
	return fmt.Sprintf("%.3g", v)
}

func signed(v float64) string {
	if v >= 0 {
		return "+" + num(v)
	}
	return num(v)
}
