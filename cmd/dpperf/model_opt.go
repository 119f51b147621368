package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/dpperf/dpperf/internal/cli"
	"github.com/dpperf/dpperf/internal/fail"
	"github.com/dpperf/dpperf/model/lognic"
	"github.com/dpperf/dpperf/model/opt"
	"github.com/dpperf/dpperf/model/spec"
	"github.com/dpperf/dpperf/units"
)

func runModelOptimize(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("model optimize", "model optimize --objective O --vary P=lo..hi [flags] spec.yaml", stderr)
	objective := fs.String("objective", opt.MaxThroughput, "max-throughput, min-latency or min-resources (Σ of the whole-number variables)")
	var vary, simplex cli.List
	fs.Var(&vary, "vary", "a variable and its bounds, e.g. echo.submit.parallelism=1..16 (repeatable)")
	fs.Var(&simplex, "sum-to-one", "comma-separated variables whose values must sum to 1, e.g. g.v.partition,g.w.partition (repeatable)")
	latBound := fs.String("latency-bound", "", "constraint: mean latency at the offered load at most this (e.g. 100us)")
	minThr := fs.String("min-throughput", "", "constraint: attainable throughput at least this (e.g. 8Gbit/s)")
	maxDrop := fs.Float64("max-drop", 0, "constraint: drop share at the offered load at most this (e.g. 0.001)")
	budget := fs.Float64("budget", 0, "constraint: sum of the whole-number variables at most this")
	offered := fs.String("offered", "", "override traffic.ingress")
	var sets cli.List
	fs.Var(&sets, "set", "override a parameter before optimizing, e.g. size=64B (repeatable)")
	format := addModelOutput(fs, stderr)
	write := fs.String("write", "", "write the file with the best configuration (and --offered and --set) to this YAML file")
	pf := addProgramStageFlags(fs)
	pos, err := cli.Parse(fs, args)
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
		vr, err := opt.ParseVar(v)
		if err != nil {
			return fail.Usagef("--vary %v", err)
		}
		idx[string(vr.Param)] = len(p.Vars)
		p.Vars = append(p.Vars, vr)
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
	r := p.Report(sol)
	if err := writeResult(stdout, format, func(w io.Writer) error {
		if err := r.WriteText(w); err != nil {
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
	if err := p.WriteInto(d, sol, overrides); err != nil {
		return fmt.Errorf("--write: %w", err)
	}
	b, err := d.Bytes()
	if err != nil {
		return err
	}
	return writeFileAtomic(out, b)
}
