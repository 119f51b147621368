package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/dpperf/dpperf/internal/fail"
	"github.com/dpperf/dpperf/model/lognic"
	"github.com/dpperf/dpperf/model/opt"
	"github.com/dpperf/dpperf/model/spec"
	"github.com/dpperf/dpperf/units"
)

// OptResult is the JSON form of `dpperf model optimize`
// (schema "dpperf.model.optimize/v1").
type OptResult struct {
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
}

func runModelOptimize(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("model optimize", "model optimize --objective O --vary P=lo..hi [flags] spec.yaml", stderr)
	objective := fs.String("objective", opt.MaxThroughput, "max-throughput, min-latency or min-resources (Σ of the whole-number variables)")
	var vary, simplex listFlag
	fs.Var(&vary, "vary", "a variable and its bounds, e.g. echo.submit.parallelism=1..16 (repeatable)")
	fs.Var(&simplex, "sum-to-one", "comma-separated variables whose values must sum to 1, e.g. g.v.partition,g.w.partition (repeatable)")
	latBound := fs.String("latency-bound", "", "constraint: mean latency at the offered load at most this (e.g. 100us)")
	minThr := fs.String("min-throughput", "", "constraint: attainable throughput at least this (e.g. 8Gbit/s)")
	maxDrop := fs.Float64("max-drop", 0, "constraint: drop share at the offered load at most this (e.g. 0.001)")
	budget := fs.Float64("budget", 0, "constraint: sum of the whole-number variables at most this")
	offered := fs.String("offered", "", "override traffic.ingress")
	var sets listFlag
	fs.Var(&sets, "set", "override a parameter before optimizing, e.g. size=64B (repeatable)")
	format := addModelOutput(fs, stderr)
	write := fs.String("write", "", "write the file with the best configuration (and --offered and --set) to this YAML file")
	pf := addProgramStageFlags(fs)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	path, err := oneArg("optimize", pos)
	if err != nil {
		return err
	}
	m, overrides, err := loadTunable(ctx, pf, path, *offered, sets)
	if err != nil {
		return err
	}
	p := &opt.Problem{Model: m, Objective: *objective, MaxDrop: *maxDrop, Budget: *budget, Seed: 1}
	if *latBound != "" {
		if p.LatencyBound, err = units.Parse(*latBound, units.Time); err != nil {
			return fail.Usagef("--latency-bound: %v", err)
		}
	}
	if *minThr != "" {
		if p.MinThroughput, err = units.Parse(*minThr, units.Rate); err != nil {
			return fail.Usagef("--min-throughput: %v", err)
		}
	}
	idx := map[string]int{}
	for _, v := range vary {
		name, rng, ok := strings.Cut(v, "=")
		lo, hi, ok2 := strings.Cut(rng, "..")
		if !ok || !ok2 {
			return fail.Usagef("--vary %q: want PARAM=lo..hi", v)
		}
		pr := spec.Param(name)
		a, err := pr.ParseValue(lo)
		if err != nil {
			return fail.Usagef("--vary %s: %v", name, err)
		}
		b, err := pr.ParseValue(hi)
		if err != nil {
			return fail.Usagef("--vary %s: %v", name, err)
		}
		idx[name] = len(p.Vars)
		p.Vars = append(p.Vars, opt.Var{Param: pr, Lo: a, Hi: b, Integer: pr.Integer()})
	}
	for _, g := range simplex {
		var grp []int
		for _, name := range strings.Split(g, ",") {
			i, ok := idx[name]
			if !ok {
				return fail.Usagef("--sum-to-one: %s is not a --vary variable", name)
			}
			grp = append(grp, i)
		}
		p.Simplex = append(p.Simplex, grp)
	}
	sol, err := opt.Solve(ctx, p)
	if err != nil {
		return fail.Usagef("%v", err)
	}
	r := &OptResult{Schema: "dpperf.model.optimize/v1", Objective: p.Objective, Method: sol.Method, Evaluations: sol.Evaluations,
		Feasible: sol.Feasible, Values: map[string]units.Num{}, Throughput: units.Num(sol.Throughput), Latency: units.Num(sol.Latency),
		Drop: units.Num(sol.Drop), Bottleneck: sol.Bottleneck}
	for i, v := range p.Vars {
		r.Values[string(v.Param)] = units.Num(sol.Values[i])
	}
	if err := writeResult(stdout, format, func(w io.Writer) error {
		if err := writeOptText(w, p, r); err != nil {
			return err
		}
		return writeProgramStages(w, pf)
	}, r); err != nil {
		return err
	}
	if *write != "" && sol.Feasible {
		if err := writeOptimized(path, *write, p, sol, overrides); err != nil {
			return err
		}
	}
	if !sol.Feasible {
		msg := "model optimize: no configuration meets the constraints (closest shown)"
		if *write != "" {
			msg += "; nothing written"
		}
		return fail.Requirementf("%s", msg)
	}
	return nil
}

func writeOptText(w io.Writer, p *opt.Problem, r *OptResult) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "objective\t%s\n", r.Objective)
	fmt.Fprintf(tw, "method\t%s (%d evaluations)\n", r.Method, r.Evaluations)
	fmt.Fprintf(tw, "feasible\t%v\n", r.Feasible)
	for _, v := range p.Vars {
		fmt.Fprintf(tw, "%s\t%.6g\n", v.Param, float64(r.Values[string(v.Param)]))
	}
	fmt.Fprintf(tw, "throughput\t%s\n", units.FormatRate(float64(r.Throughput)))
	fmt.Fprintf(tw, "bottleneck\t%s\n", r.Bottleneck)
	fmt.Fprintf(tw, "mean latency\t%s\n", units.FormatTime(float64(r.Latency)))
	fmt.Fprintf(tw, "drops\t%.4g\n", float64(r.Drop))
	return tw.Flush()
}

// paramDoc is a file held as a YAML tree whose parameters can be changed
// in place: spec.Doc or lognic.Doc.
type paramDoc interface {
	Set(p spec.Param, v float64) error
	Bytes() ([]byte, error)
}

// readParamDoc reads the file at path for editing.
func readParamDoc(path string) (paramDoc, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fail.Input("", fmt.Errorf("open spec: %w", err))
	}
	var d paramDoc
	if lognic.Detect(data) {
		d, err = lognic.ReadDoc(data, path)
	} else {
		d, err = spec.ReadDoc(data, path)
	}
	if err != nil {
		return nil, fail.Input("", err)
	}
	return d, nil
}

// writeOptimized writes the file at path with the solution's values (and
// the parameters overridden on the command line) to out.
func writeOptimized(path, out string, p *opt.Problem, sol *opt.Solution, overrides []spec.Param) error {
	d, err := readParamDoc(path)
	if err != nil {
		return err
	}
	for _, o := range overrides {
		v, _ := p.Model.Get(o)
		if err := d.Set(o, v); err != nil {
			return fmt.Errorf("--write: %w", err)
		}
	}
	for i, v := range p.Vars {
		if err := d.Set(v.Param, sol.Values[i]); err != nil {
			return fmt.Errorf("--write: %w", err)
		}
	}
	b, err := d.Bytes()
	if err != nil {
		return err
	}
	return writeFileAtomic(out, b)
}
