// Package sweep varies one parameter of a model specification over a list
// or range of values and evaluates the model (and optionally the
// simulation) at each, for tables and plots like figures 6, 9 and 10 of the
// LogNIC document (latency vs load, throughput vs parallelism, bandwidth vs
// packet size).
package sweep

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/dpperf/dpperf/model/analytic"
	"github.com/dpperf/dpperf/model/flow"
	"github.com/dpperf/dpperf/model/sim"
	"github.com/dpperf/dpperf/model/spec"
	"github.com/dpperf/dpperf/units"
)

// Values parses "a,b,c" or "lo..hi" (whole steps of 1 for integer
// parameters) or "lo..hi:n" (n points, evenly spaced).
func Values(p spec.Param, s string) ([]float64, error) {
	if lo, rest, ok := strings.Cut(s, ".."); ok {
		hi, nstr, hasN := strings.Cut(rest, ":")
		a, err := p.ParseValue(lo)
		if err != nil {
			return nil, err
		}
		b, err := p.ParseValue(hi)
		if err != nil {
			return nil, err
		}
		if b < a {
			return nil, fmt.Errorf("range %s: end below start", s)
		}
		if !hasN {
			if !p.Integer() {
				return nil, fmt.Errorf("range %s: want lo..hi:n with the number of points n", s)
			}
			var out []float64
			for v := a; v <= b && len(out) < 100000; v++ {
				out = append(out, v)
			}
			return out, nil
		}
		n, err := strconv.Atoi(nstr)
		if err != nil || n < 2 || n > 100000 {
			return nil, fmt.Errorf("range %s: want 2..100000 points after the colon", s)
		}
		out := make([]float64, n)
		for i := range out {
			out[i] = a + (b-a)*float64(i)/float64(n-1)
			if p.Integer() {
				out[i] = math.Round(out[i])
			}
		}
		return out, nil
	}
	var out []float64
	for _, f := range strings.Split(s, ",") {
		v, err := p.ParseValue(f)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// Point is the result at one value.
type Point struct {
	Value      units.Num `json:"value"`
	Throughput units.Num `json:"throughput_Bps"`
	Carried    units.Num `json:"carried_Bps"`
	Bottleneck string    `json:"bottleneck"`
	Latency    units.Num `json:"latency_s"`
	Drop       units.Num `json:"drop_share"`
	SimThr     units.Num `json:"sim_throughput_Bps,omitempty"`
	SimLatency units.Num `json:"sim_latency_s,omitempty"`
	SimP99     units.Num `json:"sim_p99_s,omitempty"`
}

// Result is a whole sweep (schema "dpperf.model.sweep/v1").
type Result struct {
	Schema string  `json:"schema"`
	Param  string  `json:"param"`
	Unit   string  `json:"unit"`
	Points []Point `json:"points"`
}

// Options of a sweep; Sim nil means model only.
type Options struct {
	Sim *sim.Options
	// Point, if set, is called with each point as soon as it is ready.
	Point func(Point)
}

// Run evaluates m at every value of p. On cancellation it returns the
// points done so far with the context's error.
func Run(ctx context.Context, m flow.Tunable, p spec.Param, values []float64, o Options) (*Result, error) {
	r := &Result{Schema: "dpperf.model.sweep/v1", Param: string(p), Unit: unitName(p)}
	for _, v := range values {
		if err := ctx.Err(); err != nil {
			return r, err
		}
		c := m.Clone()
		if err := c.Set(p, v); err != nil {
			return r, err
		}
		n, err := c.Compile()
		if err != nil {
			return r, err
		}
		a := analytic.Evaluate(n)
		pt := Point{Value: units.Num(v), Throughput: a.Throughput, Carried: a.Carried, Bottleneck: a.Bottleneck, Latency: a.Latency, Drop: a.DropShare}
		if o.Sim != nil {
			sr, err := sim.Run(ctx, n, *o.Sim)
			if err != nil {
				return r, err
			}
			pt.SimThr, pt.SimLatency, pt.SimP99 = sr.Throughput, sr.Latency, sr.P99
		}
		r.Points = append(r.Points, pt)
		if o.Point != nil {
			o.Point(pt)
		}
	}
	return r, nil
}

func unitName(p spec.Param) string {
	switch p.Kind() {
	case units.Rate:
		return "B/s"
	case units.Size:
		return "B"
	case units.Time:
		return "s"
	}
	return ""
}
