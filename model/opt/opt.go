// Package opt searches the configurations of a model specification for the
// best one under an objective (max throughput, min latency, min resources)
// and constraints (latency bound, throughput floor, drop ceiling,
// parallelism budget, shares summing to one).
//
// gonum has no constrained solver, so constraints are handled in two ways.
// Whole-number variables (parallelism, queue credits) are enumerated when
// their grid is small (up to MaxGrid points) and otherwise improved by
// coordinate descent from the best of a sample; constraints are then checked
// exactly. Continuous variables (partitions, traffic weights, loads) are
// mapped onto their bounds by a logistic transform, groups that must sum to
// one by a softmax, and the remaining inequality constraints enter an
// augmented Lagrangian minimised by gonum's Nelder–Mead from several
// starting points (the objectives are minima of rates, so not smooth).
//
// The JSON form of a solution (Report) is documented in json.md.
package opt

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/dpperf/dpperf/model/analytic"
	"github.com/dpperf/dpperf/model/flow"
	"github.com/dpperf/dpperf/model/spec"
)

// Objectives.
const (
	MaxThroughput = "max-throughput"
	MinLatency    = "min-latency"
	MinResources  = "min-resources"
)

// MaxGrid is the largest integer grid searched exhaustively.
const MaxGrid = 200000

// Var is one decision variable.
type Var struct {
	Param   spec.Param
	Lo, Hi  float64
	Integer bool
}

// Problem is an optimization over a specification.
type Problem struct {
	Model     flow.Tunable // the specification (flow.FromSpec) or a LogNIC file
	Vars      []Var
	Simplex   [][]int // groups of continuous variables whose values sum to 1
	Objective string

	LatencyBound  float64 // mean latency at the offered load ≤ this (0: none)
	MinThroughput float64 // attainable throughput ≥ this, B/s (0: none)
	MaxDrop       float64 // drop share at the offered load ≤ this (0: none)
	Budget        float64 // Σ of the integer variables ≤ this (0: none)
	Restarts      int     // Nelder–Mead starts (0: 8)
	Seed          uint64
}

// Point is one evaluated configuration.
type Point struct {
	Values     []float64
	Throughput float64
	Latency    float64
	Drop       float64
	Bottleneck string
	Resources  float64 // Σ of the integer variables (placements are choices, not resources)
	Feasible   bool
	Violation  float64 // total relative constraint violation (0 if feasible)
}

// Solution is the best point found and how.
type Solution struct {
	Point
	Method      string
	Evaluations int
}

// Evaluate computes a configuration.
func (p *Problem) Evaluate(x []float64) (Point, error) {
	s := p.Model.Clone()
	pt := Point{Values: append([]float64(nil), x...)}
	for i, v := range p.Vars {
		if err := s.Set(v.Param, x[i]); err != nil {
			return pt, err
		}
		if v.Integer && !strings.HasSuffix(string(v.Param), ".placement") {
			pt.Resources += x[i]
		}
	}
	n, err := s.Compile()
	if err != nil {
		return pt, err
	}
	e := analytic.NewEvaluator(n)
	r := e.Result()
	pt.Throughput, pt.Latency, pt.Drop, pt.Bottleneck = float64(r.Throughput), float64(r.Latency), float64(r.DropShare), r.Bottleneck
	pt.Violation = p.violation(pt)
	pt.Feasible = pt.Violation == 0
	return pt, nil
}

func (p *Problem) violation(pt Point) float64 {
	v := 0.0
	if p.LatencyBound > 0 && pt.Latency > p.LatencyBound {
		v += math.Min(pt.Latency/p.LatencyBound-1, 1e3)
	}
	if p.MinThroughput > 0 && pt.Throughput < p.MinThroughput*(1-1e-9) {
		v += 1 - pt.Throughput/p.MinThroughput
	}
	if p.MaxDrop > 0 && pt.Drop > p.MaxDrop {
		v += math.Min(pt.Drop/p.MaxDrop-1, 1e3)
	}
	if p.Budget > 0 && pt.Resources > p.Budget {
		v += pt.Resources/p.Budget - 1
	}
	return v
}

// score is the objective to minimise.
func (p *Problem) score(pt Point) float64 {
	switch p.Objective {
	case MaxThroughput:
		return -pt.Throughput
	case MinLatency:
		return pt.Latency
	default:
		return pt.Resources
	}
}

// better orders points: feasible first, then by objective, then fewer
// resources, then lower latency, then higher throughput.
func (p *Problem) better(a, b Point) bool {
	if a.Feasible != b.Feasible {
		return a.Feasible
	}
	if !a.Feasible {
		return a.Violation < b.Violation
	}
	sa, sb := p.score(a), p.score(b)
	if d := sa - sb; math.Abs(d) > 1e-9*math.Max(math.Abs(sa), math.Abs(sb)) {
		return d < 0
	}
	if a.Resources != b.Resources {
		return a.Resources < b.Resources
	}
	if math.Abs(a.Latency-b.Latency) > 1e-12 {
		return a.Latency < b.Latency
	}
	return a.Throughput > b.Throughput
}

func (p *Problem) check() error {
	switch p.Objective {
	case MaxThroughput, MinLatency, MinResources:
	default:
		return fmt.Errorf("optimize: unknown objective %q (max-throughput, min-latency, min-resources)", p.Objective)
	}
	if len(p.Vars) == 0 {
		return fmt.Errorf("optimize: no variables")
	}
	if p.Objective == MinResources && p.LatencyBound == 0 && p.MinThroughput == 0 && p.MaxDrop == 0 {
		// Without a constraint every configuration is feasible and the
		// fewest resources always win: the answer would say nothing.
		return fmt.Errorf("optimize: %s needs a constraint to meet with the fewest resources: give --min-throughput, --max-drop or --latency-bound", MinResources)
	}
	for _, v := range p.Vars {
		if v.Hi < v.Lo {
			return fmt.Errorf("optimize: %s: upper bound below lower bound", v.Param)
		}
		if _, err := p.Model.Get(v.Param); err != nil {
			return fmt.Errorf("optimize: %w", err)
		}
	}
	for _, g := range p.Simplex {
		for _, i := range g {
			if i < 0 || i >= len(p.Vars) || p.Vars[i].Integer {
				return fmt.Errorf("optimize: a sum-to-one group must hold continuous variables")
			}
		}
	}
	return nil
}

// Solve finds the best configuration.
func Solve(ctx context.Context, p *Problem) (*Solution, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	var ints, conts []int
	for i, v := range p.Vars {
		if v.Integer {
			ints = append(ints, i)
		} else {
			conts = append(conts, i)
		}
	}
	x := make([]float64, len(p.Vars))
	for i, v := range p.Vars {
		x[i] = v.Lo
	}
	sol := &Solution{}
	inner := func(x []float64) (Point, error) {
		if len(conts) == 0 {
			sol.Evaluations++
			return p.Evaluate(x)
		}
		return p.continuous(ctx, x, conts, &sol.Evaluations)
	}
	var best Point
	var err error
	if len(ints) == 0 {
		best, err = inner(x)
		sol.Method = "augmented Lagrangian + Nelder-Mead"
	} else {
		best, err = p.integers(ctx, x, ints, inner, sol)
	}
	if err != nil {
		return nil, err
	}
	sol.Point = best
	return sol, ctx.Err()
}
