// Package fit estimates the parameters of an opaque stage of the model
// (an SSD, a closed accelerator) from a measured latency-vs-load curve, as
// the LogNIC document does for the SSD of its NVMe-oF case study: the
// throughput P, parallelism D, queue capacity N and overhead O whose
// model latency (Stage.Latency: equations 7, 10 and 12) is closest to the
// measured mean latencies.
//
// The fit is bounded least squares on relative errors (weights 1/T²).
// The model latency is linear in O and D (T = O + D·b(P, N)), so for given
// P and N those two are solved exactly: a 2×2 weighted least-squares
// problem projected onto the box O ≥ 0, 1 ≤ D ≤ Dmax (the minimum of a
// convex quadratic on a box is inside it or on an edge, where it is a
// clamped one-dimensional solution). P and N are searched: gonum's
// optimize package has no bounds, so each is mapped from an unbounded
// coordinate onto its interval by a logistic function on a log scale
// (P in (1+10⁻⁶, 1000) × the largest measured load, N in [1, Nmax]); a
// grid picks starting points for gonum's Nelder–Mead. D and N are whole
// numbers in a specification: the continuous optimum is rounded both ways
// and the rest fitted again for each, keeping the best; a queue at its
// upper bound is unbounded.
//
// Curves come from CSV files or from fio's JSON output (format.md). The
// same fit gives a model of a whole I/O path from `dpperf profile`
// reports (FitPath). The reports of both are documented in json.md.
package fit

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/optimize"
)

// The parameters a fit can estimate.
const (
	Throughput  = "throughput"
	Parallelism = "parallelism"
	Queue       = "queue"
	Overhead    = "overhead"
)

// All lists every parameter.
var All = []string{Throughput, Parallelism, Queue, Overhead}

// Options of a fit.
type Options struct {
	Free           []string // parameters to estimate (nil: All)
	Fixed          Stage    // values of the parameters that are not free
	MaxParallelism float64  // upper bound of D (0: 1024)
	MaxQueue       float64  // upper bound of N (0: 65536)
	Distance       string   // Orthogonal (default) or Vertical
}

// How a fit measures the distance of a point from the model's curve.
const (
	// Orthogonal: in log-load and log-latency (errors in both), so that
	// the steep part of a curve near saturation, where loads barely
	// differ and latencies do, fits too: the shape of closed-loop
	// measurements such as an iodepth sweep.
	Orthogonal = "orthogonal"
	// Vertical: relative latency error at the measured load (ordinary
	// least squares); only the first stage of an orthogonal fit.
	Vertical = "vertical"
)

// Result is a fitted stage.
type Result struct {
	Stage
	Size        float64   // mean request size of the curve, bytes
	RMS         float64   // root mean square of the points' distances to the curve (orthogonal: in log units; vertical: relative latency errors)
	MaxErr      float64   // largest distance
	Predicted   []float64 // model latency at each point's load, s
	LoadAt      []float64 // model load at each point's latency, B/s
	Evaluations int
}

// bound maps z ∈ ℝ onto [lo, hi] on a log scale.
type bound struct{ lo, hi float64 }

func (b bound) at(z float64) float64 {
	return math.Exp(math.Log(b.lo) + (math.Log(b.hi)-math.Log(b.lo))/(1+math.Exp(-z)))
}

// problem is a fit with some parameters free. Throughput and queue (outer)
// are searched; overhead and parallelism (inner) enter the latency
// linearly, T = O + D·b(P, N), and are solved exactly for each outer point.
type problem struct {
	pts   []Point
	outer []string // free among throughput, queue
	inner []string // free among overhead, parallelism
	fixed Stage
	pb    bound // throughput
	nb    bound // queue
	maxD  float64
	evals int
	b     []float64 // per point: g/P·(1 + wait factor)
}

func (p *problem) bound(name string) bound {
	if name == Throughput {
		return p.pb
	}
	return p.nb
}

func get(s *Stage, name string) *float64 {
	switch name {
	case Throughput:
		return &s.Throughput
	case Parallelism:
		return &s.Parallelism
	case Queue:
		return &s.Queue
	}
	return &s.Overhead
}

// solve sets the outer parameters from z, the inner ones by least squares,
// and returns the stage and its sum of squared relative errors.
func (p *problem) solve(z []float64) (Stage, float64) {
	p.evals++
	s := p.fixed
	for i, name := range p.outer {
		*get(&s, name) = p.bound(name).at(z[i])
	}
	if cap(p.b) < len(p.pts) {
		p.b = make([]float64, len(p.pts))
	}
	unit := s
	unit.Parallelism, unit.Overhead = 1, 0
	for i, pt := range p.pts {
		p.b[i] = unit.Latency(pt.Load, pt.Size)
	}
	p.linear(&s)
	return s, p.sse(s)
}

// sse is the sum of squared relative errors of s (b must be current).
func (p *problem) sse(s Stage) float64 {
	sum := 0.0
	for i, pt := range p.pts {
		r := (s.Overhead + s.Parallelism*p.b[i] - pt.Latency) / pt.Latency
		if math.IsNaN(r) || math.IsInf(r, 0) {
			r = 1e3
		}
		sum += r * r
	}
	return sum
}

// linear fits the free inner parameters: weighted least squares of
// O + D·b on the latencies (weights 1/T²) with O ≥ 0 and 1 ≤ D ≤ maxD.
// The objective is a convex quadratic, so its minimum over the box is the
// unconstrained one if that is inside, else the best of the minima along
// the box's edges, each a clamped one-dimensional solution.
func (p *problem) linear(s *Stage) {
	freeO, freeD := slices.Contains(p.inner, Overhead), slices.Contains(p.inner, Parallelism)
	var sw, sb, sbb, sy, sby float64
	for i, pt := range p.pts {
		w := 1 / (pt.Latency * pt.Latency)
		sw += w
		sb += w * p.b[i]
		sbb += w * p.b[i] * p.b[i]
		sy += w * pt.Latency
		sby += w * p.b[i] * pt.Latency
	}
	clampD := func(d float64) float64 { return math.Min(math.Max(d, 1), p.maxD) }
	bestO := func(d float64) float64 { return math.Max(0, (sy-d*sb)/sw) }
	bestD := func(o float64) float64 {
		if sbb == 0 {
			return 1
		}
		return clampD((sby - o*sb) / sbb)
	}
	switch {
	case freeO && freeD:
		if det := sw*sbb - sb*sb; det > 0 {
			o, d := (sy*sbb-sb*sby)/det, (sw*sby-sb*sy)/det
			if o >= 0 && d >= 1 && d <= p.maxD {
				s.Overhead, s.Parallelism = o, d
				return
			}
		}
		best := math.Inf(1)
		for _, c := range [][2]float64{{0, bestD(0)}, {bestO(1), 1}, {bestO(p.maxD), p.maxD}} {
			t := *s
			t.Overhead, t.Parallelism = c[0], c[1]
			if e := p.sse(t); e < best {
				best, *s = e, t
			}
		}
	case freeO:
		s.Overhead = bestO(s.Parallelism)
	case freeD:
		s.Parallelism = bestD(s.Overhead)
	}
}

// search minimises over the outer parameters: a coarse grid, then
// Nelder–Mead from its best points.
func (p *problem) search() Stage {
	if len(p.outer) == 0 {
		s, _ := p.solve(nil)
		return s
	}
	type cand struct {
		z   []float64
		sse float64
	}
	var grid []cand
	const steps = 16
	var walk func(z []float64)
	walk = func(z []float64) {
		if len(z) == len(p.outer) {
			_, e := p.solve(z)
			grid = append(grid, cand{slices.Clone(z), e})
			return
		}
		for k := 0; k < steps; k++ {
			walk(append(z, -7+14*float64(k)/(steps-1)))
		}
	}
	walk(nil)
	slices.SortFunc(grid, func(a, b cand) int { return cmp(a.sse, b.sse) })
	f := func(z []float64) float64 { _, e := p.solve(z); return e }
	best := grid[0]
	for _, c := range grid[:min(3, len(grid))] {
		res, err := optimize.Minimize(optimize.Problem{Func: f}, c.z, &optimize.Settings{FuncEvaluations: 2000}, &optimize.NelderMead{})
		if err != nil && res == nil {
			continue
		}
		if res.F < best.sse {
			best = cand{res.X, res.F}
		}
	}
	s, _ := p.solve(best.z)
	return s
}

func cmp(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func newProblem(pts []Point, free []string, fixed Stage, pb, nb bound, maxD float64) *problem {
	p := &problem{pts: pts, fixed: fixed, pb: pb, nb: nb, maxD: maxD}
	for _, name := range free {
		if name == Throughput || name == Queue {
			p.outer = append(p.outer, name)
		} else {
			p.inner = append(p.inner, name)
		}
	}
	return p
}

// Fit estimates the free parameters of a stage from pts.
func Fit(pts []Point, o Options) (*Result, error) {
	if len(pts) == 0 {
		return nil, fmt.Errorf("fit: no measurements")
	}
	free := o.Free
	if free == nil {
		free = All
	}
	for _, f := range free {
		if !slices.Contains(All, f) {
			return nil, fmt.Errorf("fit: unknown parameter %q (throughput, parallelism, queue, overhead)", f)
		}
	}
	if len(pts) < len(free) {
		return nil, fmt.Errorf("fit: %d measurements for %d parameters", len(pts), len(free))
	}
	maxLoad, size := 0.0, 0.0
	for _, pt := range pts {
		maxLoad = math.Max(maxLoad, pt.Load)
		size += pt.Size / float64(len(pts))
	}
	for _, pt := range pts {
		if math.Abs(pt.Size-size) > 0.05*size {
			return nil, fmt.Errorf("fit: request sizes differ (%g B and mean %g B): fit one size at a time", pt.Size, size)
		}
	}
	if !slices.Contains(free, Throughput) && o.Fixed.Throughput <= maxLoad && math.IsInf(o.Fixed.Queue, 1) {
		return nil, fmt.Errorf("fit: a throughput of %g B/s with an unbounded queue cannot carry the measured %g B/s", o.Fixed.Throughput, maxLoad)
	}
	maxD, maxN := o.MaxParallelism, o.MaxQueue
	if maxD <= 0 {
		maxD = 1024
	}
	if maxN <= 0 {
		maxN = 65536
	}
	p := newProblem(pts, free, o.Fixed, bound{maxLoad * (1 + 1e-6), maxLoad * 1e3}, bound{1, maxN}, maxD)
	best := p.whole(p.search())
	if o.Distance != Vertical {
		best = p.orthogonal(best)
	}
	r := &Result{Stage: best, Size: size, Evaluations: p.evals}
	for _, pt := range pts {
		t := best.Latency(pt.Load, pt.Size)
		e := (t - pt.Latency) / pt.Latency
		if o.Distance != Vertical {
			e = distance(best, pt)
		}
		r.Predicted = append(r.Predicted, t)
		r.LoadAt = append(r.LoadAt, best.LoadAt(pt.Latency, pt.Size))
		r.RMS += e * e / float64(len(pts))
		r.MaxErr = math.Max(r.MaxErr, math.Abs(e))
	}
	r.RMS = math.Sqrt(r.RMS)
	return r, nil
}

// whole rounds the free parallelism and queue both ways, fits the other
// free parameters again for each and keeps the best; a queue at its upper
// bound becomes unbounded.
func (p *problem) whole(s Stage) Stage {
	var ints, rest []string
	for _, name := range append(slices.Clone(p.outer), p.inner...) {
		if name == Parallelism || name == Queue {
			ints = append(ints, name)
		} else {
			rest = append(rest, name)
		}
	}
	if len(ints) == 0 {
		return s
	}
	if slices.Contains(ints, Queue) && s.Queue > 0.99*p.nb.hi {
		s.Queue = math.Inf(1)
	}
	best, bestSSE := s, math.Inf(1)
	var try func(k int, c Stage)
	try = func(k int, c Stage) {
		if k == len(ints) {
			q := newProblem(p.pts, rest, c, p.pb, p.nb, p.maxD)
			c = q.search()
			p.evals += q.evals
			if e := q.sse(c); e < bestSSE {
				best, bestSSE = c, e
			}
			return
		}
		v := *get(&c, ints[k])
		lo, hi := math.Max(1, math.Floor(v)), math.Max(1, math.Ceil(v))
		if math.IsInf(v, 1) {
			lo, hi = v, v
		}
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
