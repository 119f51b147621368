package opt

import (
	"context"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/optimize"
)

// integers searches the whole-number variables: the full grid when small,
// else coordinate descent from the best of a random sample.
func (p *Problem) integers(ctx context.Context, x []float64, ints []int, inner func([]float64) (Point, error), sol *Solution) (Point, error) {
	size := 1.0
	for _, i := range ints {
		size *= p.Vars[i].Hi - p.Vars[i].Lo + 1
	}
	var best Point
	have := false
	try := func(x []float64) error {
		pt, err := inner(x)
		if err != nil {
			// A configuration the specification rejects (e.g. more
			// engines than the IP has) is infeasible, not fatal.
			pt = Point{Values: append([]float64(nil), x...), Violation: math.Inf(1)}
		}
		if !have || p.better(pt, best) {
			best, have = pt, true
		}
		return ctx.Err()
	}
	if size <= MaxGrid {
		sol.Method = "enumeration of the integer grid"
		var rec func(k int) error
		rec = func(k int) error {
			if k == len(ints) {
				return try(x)
			}
			v := p.Vars[ints[k]]
			for val := v.Lo; val <= v.Hi; val++ {
				x[ints[k]] = val
				if err := rec(k + 1); err != nil {
					return err
				}
			}
			return nil
		}
		return best, rec(0)
	}
	sol.Method = "coordinate descent over the integer variables"
	rng := rand.New(rand.NewPCG(p.Seed, 1))
	for range 200 {
		for _, i := range ints {
			v := p.Vars[i]
			x[i] = v.Lo + float64(rng.IntN(int(v.Hi-v.Lo)+1))
		}
		if err := try(x); err != nil {
			return best, err
		}
	}
	for improved := true; improved; {
		improved = false
		start := append([]float64(nil), best.Values...)
		for _, i := range ints {
			for _, d := range []float64{-1, 1} {
				y := append([]float64(nil), start...)
				y[i] += d
				if y[i] < p.Vars[i].Lo || y[i] > p.Vars[i].Hi {
					continue
				}
				prev := best
				if err := try(y); err != nil {
					return best, err
				}
				if p.better(best, prev) {
					improved = true
				}
			}
		}
	}
	return best, nil
}

// continuous optimises the continuous variables for fixed integers.
func (p *Problem) continuous(ctx context.Context, x []float64, conts []int, evals *int) (Point, error) {
	inGroup := map[int]int{}
	for g, grp := range p.Simplex {
		for _, i := range grp {
			inGroup[i] = g
		}
	}
	// z coordinates: one per free variable, one per simplex member.
	decode := func(z []float64) []float64 {
		y := append([]float64(nil), x...)
		for k, i := range conts {
			if _, ok := inGroup[i]; ok {
				continue
			}
			v := p.Vars[i]
			y[i] = v.Lo + (v.Hi-v.Lo)/(1+math.Exp(-z[k]))
		}
		for _, grp := range p.Simplex {
			m, sum := math.Inf(-1), 0.0
			for _, i := range grp {
				m = math.Max(m, z[index(conts, i)])
			}
			for _, i := range grp {
				sum += math.Exp(z[index(conts, i)] - m)
			}
			for _, i := range grp {
				y[i] = math.Exp(z[index(conts, i)]-m) / sum
			}
		}
		return y
	}
	var best Point
	have := false
	lambda, mu := 0.0, 10.0
	scale := 1.0
	obj := func(z []float64) float64 {
		*evals++
		pt, err := p.Evaluate(decode(z))
		if err != nil {
			return math.Inf(1)
		}
		if !have || p.better(pt, best) {
			best, have = pt, true
		}
		f := p.score(pt) / scale
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return 1e12
		}
		g := pt.Violation
		// Augmented Lagrangian term for the aggregated inequality g ≤ 0.
		if t := lambda + mu*g; t > 0 {
			f += (t*t - lambda*lambda) / (2 * mu)
		} else {
			f -= lambda * lambda / (2 * mu)
		}
		return f
	}
	// Scale the objective by its value at the start.
	if pt, err := p.Evaluate(x); err == nil {
		if s := math.Abs(p.score(pt)); s > 0 && !math.IsInf(s, 0) {
			scale = s
		}
	}
	rng := rand.New(rand.NewPCG(p.Seed, 2))
	restarts := p.Restarts
	if restarts <= 0 {
		restarts = 8
	}
	for r := 0; r < restarts; r++ {
		z := make([]float64, len(conts))
		if r > 0 {
			for k := range z {
				z[k] = 4 * (rng.Float64() - 0.5)
			}
		}
		for outer := 0; outer < 4; outer++ {
			res, err := optimize.Minimize(optimize.Problem{Func: obj}, z, &optimize.Settings{FuncEvaluations: 400}, &optimize.NelderMead{})
			if err != nil && res == nil {
				break
			}
			z = res.X
			pt, _ := p.Evaluate(decode(z))
			if pt.Violation == 0 {
				break
			}
			lambda = math.Max(0, lambda+mu*pt.Violation)
			mu *= 10
		}
		if ctx.Err() != nil {
			break
		}
	}
	return best, nil
}

func index(s []int, v int) int {
	for k, x := range s {
		if x == v {
			return k
		}
	}
	return -1
}
