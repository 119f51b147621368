package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/dpperf/dpperf/internal/fail"
	"github.com/dpperf/dpperf/model/fit"
	"github.com/dpperf/dpperf/units"
)

// FitPathResult is the JSON form of `dpperf model fit --profile` (schema
// "dpperf.model.fitpath/v1").
type FitPathResult struct {
	Schema string         `json:"schema"`
	Path   string         `json:"path"`
	Group  string         `json:"group"`
	From   []string       `json:"profiles"`
	Size   units.Num      `json:"size_B"`
	Stages []FitPathStage `json:"stages"`
	Check  *FitPathCheck  `json:"check,omitempty"`
}

// FitPathStage is one fitted stage.
type FitPathStage struct {
	Name        string    `json:"name"`
	Queue       string    `json:"queue"`
	Fitted      []string  `json:"fitted"`
	Throughput  units.Num `json:"throughput_Bps"`
	Parallelism units.Num `json:"parallelism"`
	Service     units.Num `json:"service_s"` // per request on one engine
}

// FitPathCheck is the model against a profile at another load.
type FitPathCheck struct {
	Profile string         `json:"profile"`
	Load    units.Num      `json:"load_Bps"`
	Rows    []FitCheckRowR `json:"rows"`
}

// FitCheckRowR is one stage (or end-to-end) of a check.
type FitCheckRowR struct {
	Stage    string    `json:"stage"`
	Measured units.Num `json:"measured_s"`
	Model    units.Num `json:"model_s"` // null past saturation
	Error    units.Num `json:"relative_error"`
	Rho      units.Num `json:"rho"`
}

// readProfiles reads comma-separated profile files.
func readProfiles(list string) ([]*fit.Profile, error) {
	var ps []*fit.Profile
	for _, name := range strings.Split(list, ",") {
		f, err := os.Open(name)
		if err != nil {
			return nil, fail.Input(name, fmt.Errorf("open profile: %w", unwrapPath(err)))
		}
		p, err := fit.ReadProfile(f, name)
		f.Close()
		if err != nil {
			return nil, fail.Input("", err)
		}
		ps = append(ps, p)
	}
	return ps, nil
}

func unwrapPath(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// runFitPath fits a model of an I/O path to profiles, writes it, and
// checks it against a profile at another load.
func runFitPath(profiles, group, check, write string, format *outputFlags, parallelism int, stdout io.Writer) error {
	ps, err := readProfiles(profiles)
	if err != nil {
		return err
	}
	pf, err := fit.FitPath(ps, fit.PathOptions{Group: group, Parallelism: parallelism})
	if err != nil {
		return fail.Input("", err)
	}
	r := &FitPathResult{Schema: "dpperf.model.fitpath/v1", Path: pf.Path, Group: pf.Group, From: pf.From, Size: units.Num(pf.Size)}
	for _, s := range pf.Stages {
		r.Stages = append(r.Stages, FitPathStage{Name: s.Name, Queue: s.Queue, Fitted: s.Fitted, Throughput: units.Num(s.Throughput),
			Parallelism: units.Num(s.Parallelism), Service: units.Num(s.Parallelism * pf.Size / s.Throughput)})
	}
	if check != "" {
		cs, err := readProfiles(check)
		if err != nil {
			return err
		}
		rows, err := pf.Check(cs[0])
		if err != nil {
			return fail.Input(check, err)
		}
		g, _ := cs[0].Group(pf.Group)
		r.Check = &FitPathCheck{Profile: check, Load: units.Num(g.Load())}
		for _, row := range rows {
			r.Check.Rows = append(r.Check.Rows, FitCheckRowR{Stage: row.Stage, Measured: units.Num(row.Measured), Model: units.Num(row.Model),
				Error: units.Num(row.Error()), Rho: units.Num(row.Rho)})
		}
	}
	if err := writeResult(stdout, format, func(w io.Writer) error { return writeFitPathText(w, r) }, r); err != nil {
		return err
	}
	if write == "" {
		return nil
	}
	if _, err := pf.Spec(); err != nil {
		return err
	}
	return writeFileAtomic(write, pf.YAML())
}

func writeFitPathText(w io.Writer, r *FitPathResult) error {
	fmt.Fprintf(w, "path %s, group %s, fitted to %s\n\n", r.Path, r.Group, strings.Join(r.From, ", "))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "STAGE\tQUEUE\tENGINES\tSERVICE\tTHROUGHPUT\tFITTED")
	for _, s := range r.Stages {
		fmt.Fprintf(tw, "%s\t%s\t%g\t%s\t%s\t%s\n", s.Name, s.Queue, float64(s.Parallelism), units.FormatTime(float64(s.Service)),
			units.FormatRate(float64(s.Throughput)), strings.Join(s.Fitted, ","))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if r.Check == nil {
		return nil
	}
	fmt.Fprintf(w, "\npredicted at the load of %s (%s):\n", r.Check.Profile, units.FormatRate(float64(r.Check.Load)))
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "STAGE\tMEASURED\tMODEL\tERROR\tRHO")
	for _, row := range r.Check.Rows {
		model, e := "saturated", "-"
		if !math.IsInf(float64(row.Model), 1) {
			model, e = units.FormatTime(float64(row.Model)), fmt.Sprintf("%+.1f%%", 100*float64(row.Error))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.3f\n", row.Stage, units.FormatTime(float64(row.Measured)), model, e, float64(row.Rho))
	}
	return tw.Flush()
}
