package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"

	"github.com/dpperf/dpperf/internal/cli"
	"github.com/dpperf/dpperf/internal/fail"
	"github.com/dpperf/dpperf/model/compare"
	"github.com/dpperf/dpperf/model/sim"
)

type simFlags struct {
	packets *int
	seed    *uint64
	det     *bool
	offered *string
	format  *cli.Output
	quiet   *bool
}

func addSimFlags(fs *flag.FlagSet, stderr io.Writer) simFlags {
	return simFlags{
		packets: fs.Int("packets", 200000, "packets to measure (after a warm-up of a tenth as many)"),
		seed:    fs.Uint64("seed", 1, "random seed"),
		det:     fs.Bool("deterministic", false, "deterministic service times at the vertices (default exponential)"),
		offered: fs.String("offered", "", "override traffic.ingress (e.g. 10Gbit/s)"),
		format:  addModelOutput(fs, stderr),
		quiet:   fs.Bool("quiet", false, "no progress on stderr (shown only on a terminal anyway)"),
	}
}

// options are the simulation's options, with progress on a terminal, and
// the function that clears it.
func (f simFlags) options(stderr io.Writer) (sim.Options, func(), error) {
	if *f.packets <= 0 {
		return sim.Options{}, nil, fail.Usagef("--packets: must be positive")
	}
	o := sim.Options{Packets: *f.packets, Warmup: -1, Seed: *f.seed, Deterministic: *f.det}
	if *f.quiet {
		return o, func() {}, nil
	}
	show, done := cli.StatusLine(stderr)
	if show != nil {
		o.Progress = func(a, t int) { show(fmt.Sprintf("simulate: %d/%d packets", a, t)) }
	}
	return o, done, nil
}

// simErr is the exit error of an interrupted or failed simulation.
func simErr(err error) error {
	if err != nil && !errors.Is(err, context.Canceled) {
		return fail.Input("", err)
	}
	return err
}

func runModelSimulate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("model simulate", "model simulate [flags] spec.yaml", stderr)
	f := addSimFlags(fs, stderr)
	pos, err := cli.Parse(fs, args)
	if err != nil {
		return err
	}
	path, err := oneArg("simulate", pos)
	if err != nil {
		return err
	}
	n, err := loadNetwork(ctx, nil, path, *f.offered)
	if err != nil {
		return err
	}
	o, done, err := f.options(stderr)
	if err != nil {
		return err
	}
	r, err := sim.Run(ctx, n, o)
	done()
	if err != nil && !errors.Is(err, context.Canceled) || r == nil {
		return simErr(err)
	}
	if werr := writeResult(stdout, f.format, r.WriteText, r); werr != nil {
		return werr
	}
	return err
}

func runModelCompare(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("model compare", "model compare [flags] spec.yaml", stderr)
	f := addSimFlags(fs, stderr)
	failAbove := fs.Float64("fail-above", 0, "exit 1 if the throughput or mean-latency error exceeds this many percent (0: never)")
	pos, err := cli.Parse(fs, args)
	if err != nil {
		return err
	}
	path, err := oneArg("compare", pos)
	if err != nil {
		return err
	}
	n, err := loadNetwork(ctx, nil, path, *f.offered)
	if err != nil {
		return err
	}
	o, done, err := f.options(stderr)
	if err != nil {
		return err
	}
	c, err := compare.Run(ctx, n, o)
	done()
	if err != nil {
		return simErr(err)
	}
	if err := writeResult(stdout, f.format, c.WriteText, c); err != nil {
		return err
	}
	if r, ok := c.Exceeding(*failAbove); ok && *failAbove > 0 {
		return fail.Requirementf("model compare: %s differs by %.2f%%, above %.2f%%", r.Metric, math.Abs(float64(r.Error))*100, *failAbove)
	}
	return nil
}
