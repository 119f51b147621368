package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/dpperf/dpperf/internal/atomicfile"
	"github.com/dpperf/dpperf/internal/cli"
	"github.com/dpperf/dpperf/internal/fail"
	"github.com/dpperf/dpperf/model/sim"
	"github.com/dpperf/dpperf/model/spec"
	"github.com/dpperf/dpperf/model/sweep"
)

func runModelSweep(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("model sweep", "model sweep --param P --values V [flags] spec.yaml", stderr)
	param := fs.String("param", "offered", "parameter to vary (offered, size, GRAPH.VERTEX.parallelism, ...; see docs/model.md)")
	values := fs.String("values", "", "values: a,b,c or lo..hi (whole numbers) or lo..hi:n (n points), with units where the parameter has them")
	simulate := fs.Bool("simulate", false, "also simulate every point (adds simulated throughput, mean and p99 latency)")
	packets := fs.Int("packets", 100000, "packets per simulated point")
	seed := fs.Uint64("seed", 1, "random seed of the simulation")
	plotFile := fs.String("plot", "", "write a plot to this .png or .svg file")
	yAxis := fs.String("y", "", "plotted quantity: throughput, latency or p99 (default: latency for offered, else throughput)")
	format := addModelOutput(fs, stderr)
	offered := fs.String("offered", "", "override traffic.ingress (e.g. 25Gbit/s)")
	var sets cli.List
	fs.Var(&sets, "set", "override a parameter before sweeping, e.g. size=64B (repeatable)")
	pos, err := cli.Parse(fs, args)
	if err != nil {
		return err
	}
	path, err := oneArg("sweep", pos)
	if err != nil {
		return err
	}
	if *values == "" {
		return fail.Usagef("model sweep: --values is required")
	}
	m, _, err := loadTunable(ctx, nil, path, *offered, sets)
	if err != nil {
		return err
	}
	p := spec.Param(*param)
	if _, err := m.Get(p); err != nil {
		return fail.Usagef("--param: %v", err)
	}
	vals, err := sweep.Values(p, *values)
	if err != nil {
		return fail.Usagef("--values: %v", err)
	}
	o := sweep.Options{Point: func(pt sweep.Point) {
		fmt.Fprintf(stderr, "sweep: %s=%g done\n", p, float64(pt.Value))
	}}
	if *simulate {
		o.Sim = &sim.Options{Packets: *packets, Warmup: -1, Seed: *seed}
	}
	r, err := sweep.Run(ctx, m, p, vals, o)
	if err != nil && !errors.Is(err, context.Canceled) {
		return fail.Input(path, err)
	}
	if *plotFile != "" && len(r.Points) > 0 {
		var buf bytes.Buffer
		if perr := r.Plot(&buf, *plotFile, *yAxis); perr != nil {
			return fail.Usagef("%v", perr)
		}
		if perr := writeFileAtomic(*plotFile, buf.Bytes()); perr != nil {
			return perr
		}
	}
	if werr := writeResult(stdout, format, func(w io.Writer) error { return r.WriteText(w, *simulate) }, r); werr != nil {
		return werr
	}
	return err
}

// writeFileAtomic writes data to a temporary file beside name and renames
// it into place, so a reader never sees a partial file.
func writeFileAtomic(name string, data []byte) error {
	return atomicfile.Write(name, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}
