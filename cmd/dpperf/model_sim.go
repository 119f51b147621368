package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"text/tabwriter"

	"github.com/dpperf/dpperf/internal/fail"
	"github.com/dpperf/dpperf/model/analytic"
	"github.com/dpperf/dpperf/model/flow"
	"github.com/dpperf/dpperf/model/sim"
	"github.com/dpperf/dpperf/units"
)

type simFlags struct {
	packets *int
	seed    *uint64
	det     *bool
	offered *string
	format  *outputFlags
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

func (f simFlags) options(stderr io.Writer) (sim.Options, func()) {
	o := sim.Options{Packets: *f.packets, Warmup: -1, Seed: *f.seed, Deterministic: *f.det}
	if *f.quiet {
		return o, func() {}
	}
	show, done := statusLine(stderr)
	if show != nil {
		o.Progress = func(a, t int) { show(fmt.Sprintf("simulate: %d/%d packets", a, t)) }
	}
	return o, done
}

func runSim(ctx context.Context, n *flow.Network, f simFlags, stderr io.Writer, unbounded bool) (*sim.Result, error) {
	if *f.packets <= 0 {
		return nil, fail.Usagef("--packets: must be positive")
	}
	o, done := f.options(stderr)
	o.Unbounded = unbounded
	r, err := sim.Run(ctx, n, o)
	done()
	if err != nil && !errors.Is(err, context.Canceled) {
		return nil, fail.Input("", err)
	}
	return r, err
}

func runModelSimulate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("model simulate", "model simulate [flags] spec.yaml", stderr)
	f := addSimFlags(fs, stderr)
	pos, err := parseFlags(fs, args)
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
	r, err := runSim(ctx, n, f, stderr, false)
	if r == nil {
		return err
	}
	if werr := writeResult(stdout, f.format, func(w io.Writer) error { return writeSimText(w, r) }, r); werr != nil {
		return werr
	}
	return err
}

func writeSimText(w io.Writer, r *sim.Result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if r.Partial {
		fmt.Fprintln(tw, "PARTIAL RESULT (interrupted)")
	}
	fmt.Fprintf(tw, "packets\t%d (+%d warm-up), %s service, seed %d\n", r.Packets, r.Warmup, r.Service, r.Seed)
	fmt.Fprintf(tw, "offered load\t%s\n", units.FormatRate(float64(r.Offered)))
	fmt.Fprintf(tw, "throughput\t%s\n", units.FormatRate(float64(r.Throughput)))
	fmt.Fprintf(tw, "mean latency\t%s\n", units.FormatTime(float64(r.Latency)))
	fmt.Fprintf(tw, "p50/p90/p99/p99.9\t%s / %s / %s / %s\n", units.FormatTime(float64(r.P50)), units.FormatTime(float64(r.P90)),
		units.FormatTime(float64(r.P99)), units.FormatTime(float64(r.P999)))
	fmt.Fprintf(tw, "drops\t%.4g%% of packets\n\n", 100*float64(r.DropShare))
	fmt.Fprintln(tw, "STATION\tUTIL\tDROP")
	for _, s := range r.Stations {
		fmt.Fprintf(tw, "%s\t%.3f\t%.3g\n", s.Name, float64(s.Util), float64(s.Drop))
	}
	fmt.Fprintln(tw, "\nGRAPH\tSIZE\tLATENCY\tP99\tDROP")
	for _, c := range r.Classes {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.3g\n", c.Graph, units.FormatSize(float64(c.Size)), units.FormatTime(float64(c.Latency)),
			units.FormatTime(float64(c.P99)), float64(c.Drop))
	}
	return tw.Flush()
}

// Comparison is the JSON form of `dpperf model compare`
// (schema "dpperf.model.compare/v1").
type Comparison struct {
	Schema string           `json:"schema"`
	Rows   []CompareRow     `json:"rows"`
	Model  *analytic.Result `json:"model"`
	Sim    *sim.Result      `json:"simulation"`
	Sat    *sim.Result      `json:"saturation"`
}

// CompareRow is one metric of model and simulation.
type CompareRow struct {
	Metric string    `json:"metric"`
	Model  units.Num `json:"model"`
	Sim    units.Num `json:"simulation"`
	Error  units.Num `json:"relative_error"`
}

func runModelCompare(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("model compare", "model compare [flags] spec.yaml", stderr)
	f := addSimFlags(fs, stderr)
	failAbove := fs.Float64("fail-above", 0, "exit 1 if the throughput or mean-latency error exceeds this many percent (0: never)")
	pos, err := parseFlags(fs, args)
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
	m := analytic.Evaluate(n)
	s, err := runSim(ctx, n, f, stderr, false)
	if err != nil {
		return err
	}
	// Capacity run: offer 25% more than the attainable throughput with
	// unbounded queues, so the bottleneck never idles.
	offered := n.Offered
	n.Offered = 1.25 * float64(m.Throughput)
	sat, err := runSim(ctx, n, f, stderr, true)
	n.Offered = offered
	if err != nil {
		return err
	}
	c := &Comparison{Schema: "dpperf.model.compare/v1", Model: m, Sim: s, Sat: sat}
	row := func(name string, mv, sv float64) {
		c.Rows = append(c.Rows, CompareRow{Metric: name, Model: units.Num(mv), Sim: units.Num(sv), Error: units.Num(relErr(mv, sv))})
	}
	row("throughput at offered load (B/s)", float64(m.Carried), float64(s.Throughput))
	row("attainable throughput (B/s)", float64(m.Throughput), float64(sat.Throughput))
	row("mean latency (s)", float64(m.Latency), float64(s.Latency))
	row("drop share", float64(m.DropShare), float64(s.DropShare))
	row("p99 latency (s)", math.NaN(), float64(s.P99))
	if err := writeResult(stdout, f.format, func(w io.Writer) error { return writeCompareText(w, c) }, c); err != nil {
		return err
	}
	if *failAbove > 0 {
		for _, r := range c.Rows[:3] {
			if e := math.Abs(float64(r.Error)); e*100 > *failAbove {
				return fail.Requirementf("model compare: %s differs by %.2f%%, above %.2f%%", r.Metric, e*100, *failAbove)
			}
		}
	}
	return nil
}

func relErr(model, sim float64) float64 {
	if math.IsNaN(model) || math.IsNaN(sim) || sim == 0 {
		return math.NaN()
	}
	return (model - sim) / sim
}

func writeCompareText(w io.Writer, c *Comparison) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "bottleneck (model)\t%s\n", c.Model.Bottleneck)
	fmt.Fprintf(tw, "simulation\t%d packets, %s service; capacity run (unbounded queues) at %s\n\n", c.Sim.Packets, c.Sim.Service, units.FormatRate(float64(c.Sat.Offered)))
	fmt.Fprintln(tw, "METRIC\tMODEL\tSIMULATION\tERROR")
	for _, r := range c.Rows {
		fm := func(v units.Num) string {
			x := float64(v)
			switch {
			case math.IsNaN(x):
				return "-"
			case r.Metric[len(r.Metric)-3:] == "(s)":
				return units.FormatTime(x)
			case r.Metric[len(r.Metric)-5:] == "(B/s)":
				return units.FormatRate(x)
			}
			return fmt.Sprintf("%.4g", x)
		}
		e := "-"
		if !math.IsNaN(float64(r.Error)) {
			e = fmt.Sprintf("%+.2f%%", 100*float64(r.Error))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Metric, fm(r.Model), fm(r.Sim), e)
	}
	return tw.Flush()
}
