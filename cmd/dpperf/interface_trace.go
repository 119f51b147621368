package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode"

	"github.com/dpperf/dpperf/classtime"
	"github.com/dpperf/dpperf/internal/fail"
	"github.com/dpperf/dpperf/mapstate"
	"github.com/dpperf/dpperf/perfiface"
	"github.com/dpperf/dpperf/replay"
	"github.com/dpperf/dpperf/replay/dist"
	"github.com/dpperf/dpperf/replay/rootcause"
)

// traceFlags are the deployment-specific flags of dpperf interface.
type traceFlags struct {
	trace, maps, percentiles, cdf, slow string
	measure                             bool
	runs, perClass                      int
}

func addTraceFlags(fs *flag.FlagSet) *traceFlags {
	f := &traceFlags{}
	fs.StringVar(&f.trace, "trace", "", "replay the capture `PCAP` and print the deployment-specific (percentile) interface")
	fs.StringVar(&f.maps, "maps", "", "with --trace: initial map state `JSON` (mapstate format)")
	fs.StringVar(&f.percentiles, "percentile", "50,90,99", "with --trace: percentiles `LIST` reported per class")
	fs.StringVar(&f.cdf, "cdf", "", "with --trace: draw the cost CDF to `FILE` (.svg or .png)")
	fs.StringVar(&f.slow, "slow", "", "with --trace: rank the conditions and PCVs that explain the packets above `P` (a percentile, e.g. 90, or a cost with its unit, e.g. 300ns)")
	fs.BoolVar(&f.measure, "measure", false, "with --trace: time representatives of each class with BPF_PROG_TEST_RUN (root) and print predicted vs measured")
	fs.IntVar(&f.runs, "runs", 100, "with --measure: single runs per representative")
	fs.IntVar(&f.perClass, "per-class", 3, "with --measure: representatives per class")
	return f
}

// active reports whether a deployment-specific flag was given.
func (f *traceFlags) active() bool {
	return f.trace != "" || f.maps != "" || f.cdf != "" || f.slow != "" || f.measure
}

func parsePercentiles(s string) ([]float64, error) {
	var out []float64
	for _, part := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimPrefix(strings.TrimSpace(part), "p"), 64)
		if err != nil || v < 0 || v > 100 {
			return nil, fail.Usagef("interface: --percentile %q: want numbers in 0..100 separated by commas", s)
		}
		out = append(out, v)
	}
	return out, nil
}

// parseSlow reads --slow: a bare number (or pN) is a percentile, a number
// followed by a unit an absolute cost in the metric's unit.
func parseSlow(s string) (rootcause.Slow, error) {
	num := strings.TrimRightFunc(s, unicode.IsLetter)
	unit := s[len(num):]
	v, err := strconv.ParseFloat(strings.TrimPrefix(num, "p"), 64)
	switch {
	case err != nil || math.IsNaN(v):
	case unit == "" && v > 0 && v < 100:
		return rootcause.Slow{Percentile: v}, nil
	case unit != "" && !strings.HasPrefix(num, "p"):
		return rootcause.Slow{Threshold: v}, nil
	}
	return rootcause.Slow{}, fail.Usagef("interface: --slow %q: want a percentile (90) or a cost with its unit (300ns)", s)
}

// runTrace prints the deployment-specific interface of it on the trace,
// and the root cause and kernel measurement when asked.
func (f *traceFlags) run(ctx context.Context, it *perfiface.Interface, resolution float64, asJSON bool, stdout io.Writer) error {
	if f.trace == "" {
		return fail.Usagef("interface: --maps, --percentile, --cdf, --slow and --measure need --trace")
	}
	want, err := parsePercentiles(f.percentiles)
	if err != nil {
		return err
	}
	var slow rootcause.Slow
	if f.slow != "" {
		if slow, err = parseSlow(f.slow); err != nil {
			return err
		}
	}
	var state *mapstate.State
	if f.maps != "" {
		if state, err = mapstate.ParseFile(f.maps); err != nil {
			return fail.Input(f.maps, err)
		}
	}
	d, err := perfiface.NewDeployment(it, perfiface.DeployOptions{Resolution: resolution, Percentiles: want})
	if err != nil {
		return err
	}
	if state != nil {
		if err := state.Validate(d.Prog(), f.maps); err != nil {
			return fail.Input(f.maps, err)
		}
	}
	if err := d.Replay(ctx, f.trace, state); err != nil {
		return err
	}
	w := bufio.NewWriter(stdout)
	if asJSON {
		err = d.WriteJSON(w)
	} else {
		err = d.Python(w)
	}
	if err != nil {
		return err
	}
	if d.OffPath > 0 {
		fmt.Fprintf(w, "\n# %d packets ran on paths the exploration does not have (first: %v); they are not priced\n", d.OffPath, d.Unmatched())
	}
	if f.cdf != "" {
		if err := d.CDF().WriteFile(f.cdf); err != nil {
			return err
		}
	}
	if f.slow != "" {
		if err := writeRootCause(w, d, slow); err != nil {
			return err
		}
	}
	if f.measure {
		if err := w.Flush(); err != nil {
			return err
		}
		if err := f.measureClasses(ctx, w, d, state); err != nil {
			return err
		}
	}
	return w.Flush()
}

// shorten cuts a long condition for a table column.
func shorten(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func writeRootCause(w io.Writer, d *perfiface.Deployment, slow rootcause.Slow) error {
	tab, err := d.RootCause(slow)
	if err != nil {
		return fmt.Errorf("root cause: %w", err)
	}
	fmt.Fprintf(w, "\n# Root cause: %d slow packets (cost above %s %s), %d others\n", tab.Slow, trimNum(tab.Threshold), d.It.Unit, tab.Fast)
	return commented(w, 0, func(tw io.Writer) {
		fmt.Fprintln(tw, "score\tkind\tfeature\texplanation")
		for _, r := range tab.Rows {
			if r.Score > 0 {
				fmt.Fprintf(tw, "%.2f\t%s\t%s\t%s\n", r.Score, r.Kind, shorten(r.Name, 60), r.Explanation)
			}
		}
	})
}

// commented writes an aligned table as Python comment lines.
func commented(w io.Writer, flags uint, fill func(tw io.Writer)) error {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 2, 8, 2, ' ', flags)
	fill(tw)
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, line := range strings.SplitAfter(b.String(), "\n") {
		if line != "" {
			if _, err := io.WriteString(w, "#  "+line); err != nil {
				return err
			}
		}
	}
	return nil
}

// classMeasure is one class's predicted and measured figures.
type classMeasure struct {
	name              string
	reps              int
	predicted, actual float64 // actual: measured ns, or the interpreter's count
	net, repeat       float64
	err               float64 // (predicted - actual) / actual
}

// measureClasses times representatives of each class in the kernel and
// prints predicted vs measured. Under --metric cost the measured figure
// is the median single-run time net of the harness; under insns and mem
// it is the interpreter's count, and the kernel time is shown beside it.
func (f *traceFlags) measureClasses(ctx context.Context, w io.Writer, d *perfiface.Deployment, state *mapstate.State) error {
	pred := map[int]float64{}
	counted := map[int]float64{}
	classOf := func(pkt *replay.Packet) string {
		pc, ok := d.Price(pkt)
		if !ok {
			return "off-path"
		}
		pred[pkt.Index] = pc.Cost
		counted[pkt.Index] = interpCount(d.It.Metric, pkt)
		return fmt.Sprintf("class %d", pc.Class)
	}
	reps, err := replay.Representatives(ctx, d.Prog(), f.trace, d.ReplayOptions(state), f.perClass, classOf)
	if err != nil {
		return err
	}
	reps = slices.DeleteFunc(reps, func(r replay.Rep) bool { return r.Class == "off-path" })
	m, err := classtime.Open(d.Prog(), classtime.Options{Runs: f.runs})
	if err != nil {
		return err
	}
	defer m.Close()
	rep, err := m.Measure(ctx, classtime.FromReps(reps))
	if err != nil {
		return err
	}
	rows := measureRows(d.It.Metric, reps, rep, pred, counted)
	return writeMeasure(w, d, rep, rows, f.runs)
}

// interpCount is what the interpreter counted of a metric on a run.
func interpCount(metric string, pkt *replay.Packet) float64 {
	switch metric {
	case perfiface.MetricInsns:
		return float64(pkt.Result.Count)
	case perfiface.MetricMem:
		n := 0
		for i := range pkt.Result.Loads {
			n += pkt.Result.Loads[i] + pkt.Result.Stores[i]
		}
		return float64(n)
	}
	return math.NaN()
}

func measureRows(metric string, reps []replay.Rep, rep *classtime.Report, pred, counted map[int]float64) []classMeasure {
	byClass := map[string][]replay.Rep{}
	for _, r := range reps {
		byClass[r.Class] = append(byClass[r.Class], r)
	}
	var rows []classMeasure
	for _, c := range rep.Classes {
		var ps, cs []float64
		for _, r := range byClass[c.Name] {
			ps = append(ps, pred[r.Index])
			cs = append(cs, counted[r.Index])
		}
		row := classMeasure{name: c.Name, reps: c.Samples, net: c.Net, repeat: c.RepeatNs}
		row.predicted, _ = dist.Percentile(ps, 50)
		row.actual = c.Net
		if metric != perfiface.MetricCost {
			row.actual, _ = dist.Percentile(cs, 50)
			// Every representative, not only the median, must agree.
			for i := range ps {
				if ps[i] != cs[i] {
					row.actual = cs[i]
					row.predicted = ps[i]
				}
			}
		}
		row.err = (row.predicted - row.actual) / row.actual
		rows = append(rows, row)
	}
	slices.SortStableFunc(rows, func(a, b classMeasure) int { return classNum(a.name) - classNum(b.name) })
	return rows
}

func writeMeasure(w io.Writer, d *perfiface.Deployment, rep *classtime.Report, rows []classMeasure, runs int) error {
	actual := "measured ns"
	if d.It.Metric != perfiface.MetricCost {
		actual = "interpreter"
	}
	fmt.Fprintf(w, "\n# Per class, BPF_PROG_TEST_RUN: %d single runs per representative after restoring its map state; harness overhead %.0f ns subtracted\n", runs, rep.Overhead)
	var errs []float64
	err := commented(w, tabwriter.AlignRight, func(tw io.Writer) {
		fmt.Fprintf(tw, "class\treps\tpredicted\t%s\terror\tnet ns\trepeat ns\t\n", actual)
		for _, r := range rows {
			errs = append(errs, math.Abs(r.err))
			fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%+.1f%%\t%.0f\t%.0f\t\n", r.name, r.reps, trimNum(r.predicted), trimNum(r.actual), 100*r.err, r.net, r.repeat)
		}
	})
	if err != nil {
		return err
	}
	med, err := dist.Percentile(errs, 50)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "# median absolute percentage error over %d classes: %.1f%%\n", len(rows), 100*med)
	if d.It.Metric != perfiface.MetricCost {
		return nil
	}
	// Calibrated targets time repeated runs with warm caches: the repeat
	// figure is their like, where the class has one.
	var rerrs []float64
	for _, r := range rows {
		if !math.IsNaN(r.repeat) && r.repeat > 0 {
			rerrs = append(rerrs, math.Abs(r.predicted-r.repeat)/r.repeat)
		}
	}
	if med, err := dist.Percentile(rerrs, 50); err == nil {
		fmt.Fprintf(w, "# against the repeat figure (warm caches; %d classes that take one path when repeated): %.1f%%\n", len(rerrs), 100*med)
	}
	return nil
}

// classNum is the number of a "class N" name.
func classNum(name string) int {
	n, _ := strconv.Atoi(strings.TrimPrefix(name, "class "))
	return n
}
