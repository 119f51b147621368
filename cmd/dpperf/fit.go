package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/dpperf/dpperf/bpfprog"
	"github.com/dpperf/dpperf/calibrate"
	"github.com/dpperf/dpperf/internal/fail"
	"github.com/dpperf/dpperf/target"
)

// runTargetsFit scales a measured target's cost groups to timed paths of
// real programs and writes the scaled target.
func runTargetsFit(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("targets fit", "targets fit --target HOST.yaml --write FILE.yaml [flags] OBJECT...", stderr)
	tgt := fs.String("target", "", "the measured target to scale (`FILE` from targets calibrate, or a built-in name)")
	out := fs.String("write", "", "write the fitted target to `FILE` (YAML)")
	deprecatedFlag(fs, "out", "--write", stderr, false, func(v string) error { *out = v; return nil })
	report := addOutputFlags(fs, "target/json.md")
	name := fs.String("name", "", "target `NAME` in the file (default: the measured target's name with -fit)")
	kind := fs.String("kind", calibrate.Envelope, "`envelope`: no timed path above its prediction (a bound); median: least relative error (an estimate)")
	groups := fs.String("groups", "alu,branch,memory,call", "comma-separated cost `GROUPS` to scale (of "+strings.Join(target.Groups, ", ")+")")
	lo := fs.Float64("min", 0.1, "smallest scale of a group")
	hi := fs.Float64("max", 2, "largest scale of a group")
	runs := fs.Int("runs", 11, "interleaved timings of every path")
	pct := fs.Float64("percentile", 90, "an envelope covers this `P`-th percentile of each path's timings")
	perProg := fs.Int("paths", 12, "distinct paths timed per program")
	cpu := fs.Int("cpu", 0, "pin every run to processor `N`")
	samplesOut := fs.String("samples", "", "also write every timed path to `FILE` (JSON)")
	samplesIn := fs.String("from-samples", "", "fit the paths timed before (`FILE` written by --samples) instead of timing objects")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	switch {
	case *tgt == "" || *out == "":
		return usageError(fs, "--target and --write are required")
	case len(pos) == 0 && *samplesIn == "":
		return fail.Usagef("targets fit: give the objects whose programs to time")
	case len(pos) > 0 && *samplesIn != "":
		return fail.Usagef("targets fit: give objects or --from-samples, not both")
	case *kind != calibrate.Envelope && *kind != calibrate.Median:
		return fail.Usagef("targets fit: --kind must be %s or %s", calibrate.Envelope, calibrate.Median)
	case *pct <= 0 || *pct > 100:
		return fail.Usagef("targets fit: --percentile must be in (0, 100]")
	}
	t, err := target.Load(*tgt)
	if err != nil {
		return err
	}
	fopts := calibrate.FitOptions{Kind: *kind, Min: *lo, Max: *hi}
	for _, g := range strings.Split(*groups, ",") {
		g = strings.TrimSpace(g)
		for _, one := range strings.Split(g, "+") {
			if !slices.Contains(target.Groups, one) {
				return fail.Usagef("targets fit: unknown cost group %q (groups: %s)", one, strings.Join(target.Groups, ", "))
			}
		}
		fopts.Groups = append(fopts.Groups, g)
	}
	var samples []*calibrate.Sample
	if *samplesIn != "" {
		samples, err = readSamples(*samplesIn)
	} else {
		samples, err = timePaths(ctx, pos, t, calibrate.CorpusOptions{PerProgram: *perProg, Runs: *runs, Percentile: *pct, CPU: *cpu}, stderr)
	}
	if err != nil {
		return err
	}
	if *samplesOut != "" {
		js, err := json.MarshalIndent(samples, "", "  ")
		if err != nil {
			return err
		}
		if err := writeAtomic(ctx, *samplesOut, append(js, '\n')); err != nil {
			return err
		}
	}
	res, err := calibrate.Fit(samples, fopts)
	if err != nil {
		return fail.Requirementf("targets fit: %v", err)
	}
	fitted := t.Scaled(res.Scale)
	fitted.Name = *name
	if fitted.Name == "" {
		fitted.Name = t.Name + "-fit"
	}
	f := &target.Fit{Kind: res.Kind, Scale: res.Scale, Samples: len(samples), Percentile: *pct,
		ErrMin: round3(res.ErrMin), ErrMedian: round3(res.ErrMedian), ErrMax: round3(res.ErrMax)}
	for _, s := range samples {
		if !slices.Contains(f.Programs, s.Program) {
			f.Programs = append(f.Programs, s.Program)
		}
	}
	fitted.Description = fmt.Sprintf("%s, costs scaled by group to %d timed paths of %d programs (%s)", t.Description, len(samples), len(f.Programs), *kind)
	if fitted.Calibration == nil {
		fitted.Calibration = &target.Calibration{Runs: *runs, Percentile: *pct, Model: "built-in"}
	} else {
		c := *fitted.Calibration
		fitted.Calibration = &c
	}
	fitted.Calibration.Fit = f
	data, err := target.Marshal(fitted)
	if err != nil {
		return err
	}
	if _, err := target.Parse(data); err != nil {
		return fmt.Errorf("fitted target does not parse: %w", err)
	}
	if err := writeAtomic(ctx, *out, data); err != nil {
		return err
	}
	err = report.write(stdout, func(w io.Writer) error {
		if report.json {
			return fitJSON(w, fitted.Name, *out, samples, res)
		}
		fitTable(w, samples, res)
		return nil
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "wrote %s (%s)\n", *out, fitted.Name)
	return nil
}

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }

// timePaths times paths of every XDP program of the objects.
func timePaths(ctx context.Context, files []string, t *target.Target, opts calibrate.CorpusOptions, stderr io.Writer) ([]*calibrate.Sample, error) {
	var progs []*bpfprog.Program
	for _, file := range files {
		ps, err := xdpPrograms(file)
		if err != nil {
			return nil, err
		}
		progs = append(progs, ps...)
	}
	var done func()
	opts.Progress, done = statusLine(stderr)
	samples, err := calibrate.Corpus(ctx, progs, t, opts)
	done()
	return samples, err
}

// readSamples reads the paths a former fit timed.
func readSamples(file string) ([]*calibrate.Sample, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fail.Input(file, err)
	}
	var ss []*calibrate.Sample
	if err := json.Unmarshal(data, &ss); err != nil {
		return nil, fail.Input(file, fmt.Errorf("samples: %w", err))
	}
	for i, s := range ss {
		if len(s.Share) != len(target.Groups) || s.High <= 0 || s.Median <= 0 {
			return nil, fail.Input(file, fmt.Errorf("sample %d: want %d group shares and positive times", i+1, len(target.Groups)))
		}
	}
	return ss, nil
}

// xdpPrograms loads every XDP program of an object, with the entries whose
// section names no type (read as XDP).
func xdpPrograms(file string) ([]*bpfprog.Program, error) {
	ps, err := bpfprog.XDPPrograms(file)
	if err != nil {
		return nil, err
	}
	if len(ps) == 0 {
		return nil, fail.Input(file, fmt.Errorf("no XDP program"))
	}
	return ps, nil
}

// fitJSON writes a fit as JSON (target/json.md).
func fitJSON(w io.Writer, name, file string, samples []*calibrate.Sample, res *calibrate.FitResult) error {
	type path struct {
		Program  string  `json:"program"`
		Insns    int     `json:"insns"`
		Median   float64 `json:"median_ns"`
		High     float64 `json:"high_ns"`
		Before   float64 `json:"before_ns"`
		Fitted   float64 `json:"fitted_ns"`
		Relative float64 `json:"error"`
	}
	v := struct {
		Schema string             `json:"schema"`
		Target string             `json:"target"`
		File   string             `json:"file"`
		Kind   string             `json:"kind"`
		Scale  map[string]float64 `json:"scale"`
		Unused []string           `json:"unused"`
		Paths  []path             `json:"paths"`
		Min    float64            `json:"error_min"`
		Median float64            `json:"error_median"`
		Max    float64            `json:"error_max"`
	}{Schema: "dpperf.targets.fit/v1", Target: name, File: file, Kind: res.Kind, Scale: res.Scale, Unused: res.Unused, Paths: []path{},
		Min: res.ErrMin, Median: res.ErrMedian, Max: res.ErrMax}
	if v.Unused == nil {
		v.Unused = []string{}
	}
	for _, s := range samples {
		m := s.High
		if res.Kind == calibrate.Median {
			m = s.Median
		}
		p := s.Predicted(res.Scale)
		v.Paths = append(v.Paths, path{s.Program, s.Insns, s.Median, s.High, s.Predicted(nil), p, (p - m) / m})
	}
	return writeJSON(w, v)
}

// fitTable prints the scales and every sample's measured and predicted
// time.
func fitTable(w io.Writer, samples []*calibrate.Sample, res *calibrate.FitResult) {
	fmt.Fprintf(w, "fit (%s):", res.Kind)
	for _, g := range target.Groups {
		if s, ok := res.Scale[g]; ok {
			fmt.Fprintf(w, " %s ×%.3f", g, s)
		}
	}
	fmt.Fprintln(w)
	if len(res.Unused) > 0 {
		fmt.Fprintf(w, "not fitted (no path uses them): %s\n", strings.Join(res.Unused, ", "))
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "program\tinsns\tmedian ns\thigh ns\tbefore ns\tfitted ns\terror\t")
	for _, s := range samples {
		m := s.High
		if res.Kind == calibrate.Median {
			m = s.Median
		}
		p := s.Predicted(res.Scale)
		fmt.Fprintf(tw, "%s\t%d\t%.1f\t%.1f\t%.1f\t%.1f\t%+.1f%%\t\n", s.Program, s.Insns, s.Median, s.High,
			s.Predicted(nil), p, 100*(p-m)/m)
	}
	tw.Flush()
	fmt.Fprintf(w, "error: min %+.1f%%, median %+.1f%%, max %+.1f%% over %d paths\n",
		100*res.ErrMin, 100*res.ErrMedian, 100*res.ErrMax, len(samples))
}
