package main

import (
	"context"
	"fmt"
	"io"

	"github.com/dpperf/dpperf/calibrate"
	"github.com/dpperf/dpperf/internal/atomicfile"
	"github.com/dpperf/dpperf/internal/cli"
	"github.com/dpperf/dpperf/internal/fail"
	"github.com/dpperf/dpperf/target"
)

// runTargetsCalibrate measures this host and writes a target file.
func runTargetsCalibrate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("targets calibrate", "targets calibrate --write FILE.yaml | --host [--runs R] [--quick] [flags]", stderr)
	out := fs.String("write", "", "write the calibrated target to `FILE` (YAML; loadable with bound --target FILE)")
	cli.Deprecated(fs, "out", "--write", stderr, false, func(v string) error { *out = v; return nil })
	report := cli.AddOutput(fs, "calibrate/json.md")
	host := fs.Bool("host", false, "write it as this machine's calibration for --target host (in the user's cache directory), replacing any")
	name := fs.String("name", calibrate.HostName, "target `NAME` in the file")
	runs := fs.Int("runs", 0, "interleaved runs of every measurement (default 21; 11 with --host; 3 with --quick)")
	quick := fs.Bool("quick", false, "a few seconds: fewer copies, runs and variants (tests)")
	cpu := fs.Int("cpu", 0, "pin every run to processor `N`")
	pct := fs.Float64("percentile", 90, "take this `P`-th percentile of the runs as each cost")
	model := fs.String("model", calibrate.Throughput, "price instruction classes by their `throughput` (independent operations), latency (the dearer of a dependent chain and independent operations; --host always does) or chain (throughput, and each block's longest dependency chain at its latency)")
	pos, err := cli.Parse(fs, args)
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
	case *model != calibrate.Throughput && *model != calibrate.Latency && *model != calibrate.Chain:
		return fail.Usagef("targets calibrate: --model must be %s, %s or %s", calibrate.Throughput, calibrate.Latency, calibrate.Chain)
	}
	opts := calibrate.Options{Runs: *runs, Quick: *quick, Percentile: *pct, CPU: *cpu}
	if *host && *runs == 0 && !*quick {
		opts.Runs = calibrate.HostRuns // as a first use of --target host
	}
	var done func()
	opts.Progress, done = cli.StatusLine(stderr)
	res, err := calibrate.Run(ctx, opts)
	done()
	if err != nil {
		return err
	}
	t, err := res.Target(*name, *model)
	if *host {
		t, err = res.HostTarget()
	}
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
		if err := report.Write(stdout, func(w io.Writer) error { return writeCalibration(w, report, res.Report(t, path)) }); err != nil {
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
	if err := report.Write(stdout, func(w io.Writer) error { return writeCalibration(w, report, res.Report(t, *out)) }); err != nil {
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

// writeCalibration prints a calibration's report as text or JSON.
func writeCalibration(w io.Writer, out *cli.Output, r *calibrate.Report) error {
	if out.JSON {
		return cli.WriteJSON(w, r)
	}
	return r.WriteText(w)
}
