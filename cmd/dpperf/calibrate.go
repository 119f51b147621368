package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/dpperf/dpperf/calibrate"
	"github.com/dpperf/dpperf/internal/atomicfile"
	"github.com/dpperf/dpperf/internal/fail"
	"github.com/dpperf/dpperf/target"
)

// runTargetsCalibrate measures this host and writes a target file.
func runTargetsCalibrate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("targets calibrate", "targets calibrate --write FILE.yaml | --host [--runs R] [--quick] [flags]", stderr)
	out := fs.String("write", "", "write the calibrated target to `FILE` (YAML; loadable with bound --target FILE)")
	deprecatedFlag(fs, "out", "--write", stderr, false, func(v string) error { *out = v; return nil })
	report := addOutputFlags(fs, "target/json.md")
	host := fs.Bool("host", false, "write it as this machine's calibration for --target host (in the user's cache directory), replacing any")
	name := fs.String("name", calibrate.HostName, "target `NAME` in the file")
	runs := fs.Int("runs", 0, "interleaved runs of every measurement (default 21; 11 with --host; 3 with --quick)")
	quick := fs.Bool("quick", false, "a few seconds: fewer copies, runs and variants (tests)")
	cpu := fs.Int("cpu", 0, "pin every run to processor `N`")
	pct := fs.Float64("percentile", 90, "take this `P`-th percentile of the runs as each cost")
	model := fs.String("model", calibrate.Throughput, "price instruction classes by their `throughput` (independent operations) or latency (dependent chains)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	switch {
	case len(pos) > 0:
		return fail.Usagef("targets calibrate: unexpected arguments %v", pos)
	case *out == "" && !*host:
		return fail.Usagef("targets calibrate: --write FILE or --host is required")
	case *out != "" && *host:
		return fail.Usagef("targets calibrate: --write and --host exclude each other")
	case *host && (*name != calibrate.HostName || *model != calibrate.Throughput):
		return fail.Usagef("targets calibrate: --host takes no --name or --model")
	case *model != calibrate.Throughput && *model != calibrate.Latency:
		return fail.Usagef("targets calibrate: --model must be %s or %s", calibrate.Throughput, calibrate.Latency)
	}
	opts := calibrate.Options{Runs: *runs, Quick: *quick, Percentile: *pct, CPU: *cpu}
	if *host && *runs == 0 && !*quick {
		opts.Runs = calibrate.HostRuns // as a first use of --target host
	}
	var done func()
	opts.Progress, done = statusLine(stderr)
	res, err := calibrate.Run(ctx, opts)
	done()
	if err != nil {
		return err
	}
	t, err := res.Target(*name, *model)
	if err != nil {
		return err
	}
	if *host {
		cache, err := calibrate.DefaultHostCache()
		if err != nil {
			return err
		}
		path, err := cache.Store(t)
		if err != nil {
			return err
		}
		if err := report.write(stdout, func(w io.Writer) error { return calibrationReport(w, report.json, res, t, path) }); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "wrote %s (%s, %s): used by --target host on this machine\n", path, t.Name, res.Elapsed.Round(1e8))
		return nil
	}
	data, err := target.Marshal(t)
	if err != nil {
		return err
	}
	if _, err := target.Parse(data); err != nil {
		return fmt.Errorf("calibrated target does not parse: %w", err)
	}
	if err := writeAtomic(ctx, *out, data); err != nil {
		return err
	}
	if err := report.write(stdout, func(w io.Writer) error { return calibrationReport(w, report.json, res, t, *out) }); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "wrote %s (%s, %s): use it with 'dpperf bound --target %s'\n", *out, t.Name,
		res.Elapsed.Round(1e8), *out)
	return nil
}

// writeAtomic writes data under path unless ctx was cancelled first.
func writeAtomic(ctx context.Context, path string, data []byte) error {
	return atomicfile.Write(path, func(w io.Writer) error {
		if _, err := w.Write(data); err != nil {
			return err
		}
		return ctx.Err()
	})
}

// calibrationJSON is the JSON form of a calibration (target/json.md).
type calibrationJSON struct {
	Schema      string            `json:"schema"`
	Target      string            `json:"target"`
	File        string            `json:"file"`
	Percentile  float64           `json:"percentile"`
	Costs       []calibrationCost `json:"costs"`
	NotMeasured []string          `json:"not_measured"`
	Notes       []string          `json:"notes"`
}

type calibrationCost struct {
	Cost    string  `json:"cost"`
	NS      float64 `json:"ns"`
	Min     float64 `json:"min_ns"`
	Median  float64 `json:"median_ns"`
	High    float64 `json:"high_ns"`
	Max     float64 `json:"max_ns"`
	Variant string  `json:"variant"`
}

// calibrationReport writes the calibration as calibrationTable does, or
// as JSON.
func calibrationReport(w io.Writer, asJSON bool, res *calibrate.Result, t *target.Target, file string) error {
	if !asJSON {
		return calibrationTable(w, res, t)
	}
	c := calibrationJSON{Schema: "dpperf.calibration/v1", Target: t.Name, File: file, Percentile: res.Options.Percentile,
		Costs: []calibrationCost{}, NotMeasured: []string{}, Notes: t.Calibration.Notes}
	if c.Notes == nil {
		c.Notes = []string{}
	}
	seen := map[string]bool{}
	for _, m := range res.Measurements {
		if m.Err != nil {
			c.NotMeasured = append(c.NotMeasured, fmt.Sprintf("%s: %v", m.ID(), m.Err))
			continue
		}
		s, ok := t.Calibration.Spread[m.Key]
		if seen[m.Key] || !ok {
			continue
		}
		seen[m.Key] = true
		c.Costs = append(c.Costs, calibrationCost{Cost: m.Key, NS: calibrate.RoundUp(s.High, 0.01), Min: s.Min, Median: s.Median,
			High: s.High, Max: s.Max, Variant: s.Variant})
	}
	return writeJSON(w, c)
}

// calibrationTable prints every measured cost with its spread (PCV costs
// per unit of the PCV, pcv.TYPE.PCV); failed micro-programs are listed
// with the reason, then the calibration's notes.
func calibrationTable(w io.Writer, res *calibrate.Result, t *target.Target) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "cost\tns\tmin\tmedian\tp%g\tmax\tspread\tvariant\n", res.Options.Percentile)
	var failed []string
	seen := map[string]bool{}
	for _, m := range res.Measurements {
		if m.Err != nil {
			failed = append(failed, fmt.Sprintf("  %s: %v", m.ID(), m.Err))
			continue
		}
		if seen[m.Key] {
			continue
		}
		seen[m.Key] = true
		s, ok := t.Calibration.Spread[m.Key]
		if !ok {
			continue
		}
		spread := "-"
		if s.Median > 0 {
			spread = fmt.Sprintf("%.0f%%", 100*(s.Max-s.Min)/s.Median)
		}
		fmt.Fprintf(tw, "%s\t%.3g\t%.3f\t%.3f\t%.3f\t%.3f\t%s\t%s\n", m.Key, calibrate.RoundUp(s.High, 0.01),
			s.Min, s.Median, s.High, s.Max, spread, s.Variant)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(failed) > 0 {
		fmt.Fprintf(w, "not measured (estimated from the built-in x86-64 table):\n%s\n", strings.Join(failed, "\n"))
	}
	if notes := t.Calibration.Notes; len(notes) > 0 {
		fmt.Fprintf(w, "notes:\n  %s\n", strings.Join(notes, "\n  "))
	}
	return nil
}
