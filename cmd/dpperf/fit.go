package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/dpperf/dpperf/bpfprog"
	"github.com/dpperf/dpperf/calibrate"
	"github.com/dpperf/dpperf/internal/cli"
	"github.com/dpperf/dpperf/internal/fail"
	"github.com/dpperf/dpperf/target"
)

// runTargetsFit scales a measured target's cost groups to timed paths of
// real programs and writes the scaled target.
func runTargetsFit(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("targets fit", "targets fit --target HOST.yaml --write FILE.yaml [flags] OBJECT...", stderr)
	tgt := fs.String("target", "", "the measured target to scale (`FILE` from targets calibrate, a built-in name, or host: this machine's calibration)")
	out := fs.String("write", "", "write the fitted target to `FILE` (YAML)")
	cli.Deprecated(fs, "out", "--write", stderr, false, func(v string) error { *out = v; return nil })
	report := cli.AddOutput(fs, "calibrate/json.md")
	name := fs.String("name", "", "target `NAME` in the file (default: the measured target's name with -fit)")
	kind := fs.String("kind", calibrate.Envelope, "`envelope`: no timed path above its prediction (a bound); median: least relative error (an estimate)")
	groups := fs.String("groups", "alu,branch,memory,call", "comma-separated cost `GROUPS` to scale (of "+strings.Join(target.Groups, ", ")+")")
	lo := fs.Float64("min", 0.1, "smallest scale of a group")
	hi := fs.Float64("max", 2, "largest scale of a group")
	runs := fs.Int("runs", 11, "interleaved timings of every path")
	pct := fs.Float64("percentile", 90, "an envelope covers this `P`-th percentile of each path's timings (with --from-samples: taken again when given)")
	perProg := fs.Int("paths", 12, "distinct paths timed per program")
	cpu := fs.Int("cpu", 0, "pin every run to processor `N`")
	samplesOut := fs.String("samples", "", "also write every timed path to `FILE` (JSON)")
	hold := fs.Bool("hold-out", true, "envelope: fit once more without each program and widen the envelope by the largest shortfall of a program under the fit of the others")
	samplesIn := fs.String("from-samples", "", "fit the paths timed before (`FILE`s written by --samples, comma-separated: their union) instead of timing objects")
	pos, err := cli.Parse(fs, args)
	if err != nil {
		return err
	}
	switch {
	case *tgt == "" || *out == "":
		return cli.UsageError(fs, "--target and --write are required")
	case len(pos) == 0 && *samplesIn == "":
		return fail.Usagef("targets fit: give the objects whose programs to time")
	case len(pos) > 0 && *samplesIn != "":
		return fail.Usagef("targets fit: give objects or --from-samples, not both")
	case *kind != calibrate.Envelope && *kind != calibrate.Median:
		return fail.Usagef("targets fit: --kind must be %s or %s", calibrate.Envelope, calibrate.Median)
	case *pct <= 0 || *pct > 100:
		return fail.Usagef("targets fit: --percentile must be in (0, 100]")
	}
	t, err := loadTarget(ctx, *tgt, stderr)
	if err != nil {
		return err
	}
	fopts := calibrate.FitOptions{Kind: *kind, Min: *lo, Max: *hi, HoldOut: *hold}
	if fopts.Groups, err = calibrate.ParseGroups(*groups); err != nil {
		return fail.Usagef("targets fit: %v", err)
	}
	var samples []*calibrate.Sample
	if *samplesIn != "" {
		for _, file := range strings.Split(*samplesIn, ",") {
			var more []*calibrate.Sample
			if more, err = calibrate.ReadSamples(file); err != nil {
				break
			}
			samples = append(samples, more...)
		}
		if err == nil && cli.IsSet(fs, "percentile") {
			for _, s := range samples {
				s.SetHigh(*pct)
			}
		}
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
	fitted := calibrate.Fitted(t, *name, samples, res, *runs, *pct)
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
	err = report.Write(stdout, func(w io.Writer) error {
		rep := calibrate.NewFitReport(fitted.Name, *out, samples, res)
		if report.JSON {
			return cli.WriteJSON(w, rep)
		}
		return rep.WriteText(w)
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "wrote %s (%s)\n", *out, fitted.Name)
	return nil
}

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
	opts.Progress, done = cli.StatusLine(stderr)
	samples, err := calibrate.Corpus(ctx, progs, t, opts)
	done()
	return samples, err
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
