package fit

import (
	"math"
	"slices"

	"github.com/dpperf/dpperf/model/queue"
	"gonum.org/v1/gonum/optimize"
)

// LoadAt is the inverse of Latency: the load (B/s) the stage carries when
// its mean latency for requests of size bytes is t; 0 at or below the
// unloaded latency and the throughput at or above the full-queue limit.
func (s Stage) LoadAt(t, size float64) float64 {
	svc := s.Parallelism * size / s.Throughput
	lat := func(rho float64) float64 {
		wf, _ := queue.Stats(rho, s.Queue)
		return s.Overhead + svc*(1+wf)
	}
	if t <= lat(0) {
		return 0
	}
	if !math.IsInf(s.Queue, 1) && t >= s.Overhead+s.Queue*svc {
		return s.Throughput
	}
	lo, hi := 0.0, 1.0
	for lat(hi) < t {
		lo, hi = hi, 2*hi
		if hi > 1e15 {
			return s.Throughput
		}
	}
	if math.IsInf(s.Queue, 1) {
		hi = math.Min(hi, 1)
	}
	for range 100 {
		mid := (lo + hi) / 2
		if mid <= lo || mid >= hi {
			break
		}
		if lat(mid) < t {
			lo = mid
		} else {
			hi = mid
		}
	}
	rho := (lo + hi) / 2
	return rho * (1 - queue.Block(rho, s.Queue)) * s.Throughput
}

// distance is the distance in log-load and log-latency from a measured
// point to the model's curve, approximated through the curve's points at
// the measured load and at the measured latency: near saturation, where
// the curve is steep and loads barely differ, the horizontal distance is
// the small one; at light load the vertical one.
func distance(s Stage, pt Point) float64 {
	rv := math.Log(s.Latency(pt.Load, pt.Size) / pt.Latency)
	x := s.LoadAt(pt.Latency, pt.Size)
	if x <= 0 || math.IsInf(rv, 0) || math.IsNaN(rv) {
		if math.IsInf(rv, 0) || math.IsNaN(rv) {
			return 1e3
		}
		return math.Abs(rv)
	}
	rh := math.Log(x / pt.Load)
	if rv == 0 || rh == 0 {
		return 0
	}
	return math.Abs(rv*rh) / math.Hypot(rv, rh)
}

// orthogonal refines s by minimising the sum of squared distances over
// the free parameters with Nelder–Mead (bounds by logistic transforms, as
// in search), then rounds the parallelism and queue both ways and refines
// the rest for each.
func (p *problem) orthogonal(s Stage) Stage {
	free := append(slices.Clone(p.outer), p.inner...)
	minLat := math.Inf(1)
	for _, pt := range p.pts {
		minLat = math.Min(minLat, pt.Latency)
	}
	type tr struct{ at, inv func(float64) float64 }
	logistic := func(lo, hi float64, log bool) tr {
		if log {
			lo, hi = math.Log(lo), math.Log(hi)
		}
		return tr{
			at: func(z float64) float64 {
				v := lo + (hi-lo)/(1+math.Exp(-z))
				if log {
					return math.Exp(v)
				}
				return v
			},
			inv: func(x float64) float64 {
				if log {
					x = math.Log(x)
				}
				u := math.Min(math.Max((x-lo)/(hi-lo), 1e-9), 1-1e-9)
				return math.Log(u / (1 - u))
			},
		}
	}
	trs := map[string]tr{
		Throughput:  logistic(p.pb.lo, p.pb.hi, true),
		Queue:       logistic(p.nb.lo, p.nb.hi, true),
		Parallelism: logistic(1, p.maxD, true),
		Overhead:    logistic(0, minLat, false),
	}
	cost := func(c Stage) float64 {
		p.evals++
		sum := 0.0
		for _, pt := range p.pts {
			d := distance(c, pt)
			sum += d * d
		}
		return sum
	}
	refine := func(c Stage, names []string) Stage {
		if len(names) == 0 {
			return c
		}
		set := func(z []float64) Stage {
			x := c
			for i, n := range names {
				*get(&x, n) = trs[n].at(z[i])
			}
			return x
		}
		z0 := make([]float64, len(names))
		for i, n := range names {
			z0[i] = trs[n].inv(*get(&c, n))
		}
		res, err := optimize.Minimize(optimize.Problem{Func: func(z []float64) float64 { return cost(set(z)) }}, z0,
			&optimize.Settings{FuncEvaluations: 4000}, &optimize.NelderMead{})
		if err != nil && res == nil {
			return c
		}
		if got := set(res.X); cost(got) < cost(c) {
			return got
		}
		return c
	}
	inf := math.IsInf(s.Queue, 1)
	var cont, ints []string
	for _, n := range free {
		switch {
		case n == Queue && inf:
		case n == Parallelism || n == Queue:
			ints = append(ints, n)
			cont = append(cont, n)
		default:
			cont = append(cont, n)
		}
	}
	var rest []string
	for _, n := range cont {
		if !slices.Contains(ints, n) {
			rest = append(rest, n)
		}
	}
	s = refine(s, cont)
	best, bestCost := s, math.Inf(1)
	var try func(k int, c Stage)
	try = func(k int, c Stage) {
		if k == len(ints) {
			c = refine(c, rest)
			if e := cost(c); e < bestCost {
				best, bestCost = c, e
			}
			return
		}
		v := *get(&c, ints[k])
		lo, hi := math.Max(1, math.Floor(v)), math.Max(1, math.Ceil(v))
		for _, w := range []float64{lo, hi} {
			*get(&c, ints[k]) = w
			try(k+1, c)
			if lo == hi {
				break
			}
		}
	}
	try(0, s)
	return best
}
