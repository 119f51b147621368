package opt

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/dpperf/dpperf/model/spec"
	"github.com/dpperf/dpperf/units"
)

// Schema names the JSON form of a Report (json.md).
const Schema = "dpperf.model.optimize/v1"

// Report is a solution of a problem (`dpperf model optimize`), as JSON.
type Report struct {
	Schema      string               `json:"schema"`
	Objective   string               `json:"objective"`
	Method      string               `json:"method"`
	Evaluations int                  `json:"evaluations"`
	Feasible    bool                 `json:"feasible"`
	Values      map[string]units.Num `json:"values"`
	Throughput  units.Num            `json:"throughput_Bps"`
	Latency     units.Num            `json:"latency_s"`
	Drop        units.Num            `json:"drop_share"`
	Bottleneck  string               `json:"bottleneck"`
	vars        []string             // the variables in the problem's order, for the text
}

// Report returns the solution sol of p as JSON.
func (p *Problem) Report(sol *Solution) *Report {
	r := &Report{Schema: Schema, Objective: p.Objective, Method: sol.Method, Evaluations: sol.Evaluations,
		Feasible: sol.Feasible, Values: map[string]units.Num{}, Throughput: units.Num(sol.Throughput), Latency: units.Num(sol.Latency),
		Drop: units.Num(sol.Drop), Bottleneck: sol.Bottleneck}
	for i, v := range p.Vars {
		r.Values[string(v.Param)] = units.Num(sol.Values[i])
		r.vars = append(r.vars, string(v.Param))
	}
	return r
}

// WriteText prints the report for people.
func (r *Report) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "objective\t%s\n", r.Objective)
	fmt.Fprintf(tw, "method\t%s (%d evaluations)\n", r.Method, r.Evaluations)
	fmt.Fprintf(tw, "feasible\t%v\n", r.Feasible)
	for _, v := range r.vars {
		fmt.Fprintf(tw, "%s\t%.6g\n", v, float64(r.Values[v]))
	}
	fmt.Fprintf(tw, "throughput\t%s\n", units.FormatRate(float64(r.Throughput)))
	fmt.Fprintf(tw, "bottleneck\t%s\n", r.Bottleneck)
	fmt.Fprintf(tw, "mean latency\t%s\n", units.FormatTime(float64(r.Latency)))
	fmt.Fprintf(tw, "drops\t%.4g\n", float64(r.Drop))
	return tw.Flush()
}

// ParseVar reads a variable and its bounds, PARAM=lo..hi (e.g.
// echo.submit.parallelism=1..16).
func ParseVar(s string) (Var, error) {
	name, rng, ok := strings.Cut(s, "=")
	lo, hi, ok2 := strings.Cut(rng, "..")
	if !ok || !ok2 {
		return Var{}, fmt.Errorf("%q: want PARAM=lo..hi", s)
	}
	pr := spec.Param(name)
	a, err := pr.ParseValue(lo)
	if err != nil {
		return Var{}, fmt.Errorf("%s: %v", name, err)
	}
	b, err := pr.ParseValue(hi)
	if err != nil {
		return Var{}, fmt.Errorf("%s: %v", name, err)
	}
	return Var{Param: pr, Lo: a, Hi: b, Integer: pr.Integer()}, nil
}

// Setter is a file whose parameters can be changed in place (spec.Doc,
// lognic.Doc).
type Setter interface {
	Set(p spec.Param, v float64) error
}

// WriteInto sets the parameters overridden in p.Model (overrides) and the
// solution's values of p's variables in d.
func (p *Problem) WriteInto(d Setter, sol *Solution, overrides []spec.Param) error {
	for _, o := range overrides {
		v, _ := p.Model.Get(o)
		if err := d.Set(o, v); err != nil {
			return err
		}
	}
	for i, v := range p.Vars {
		if err := d.Set(v.Param, sol.Values[i]); err != nil {
			return err
		}
	}
	return nil
}
