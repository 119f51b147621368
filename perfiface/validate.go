package perfiface

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"text/tabwriter"

	"github.com/dpperf/dpperf/mapstate"
	"github.com/dpperf/dpperf/replay"
	"github.com/dpperf/dpperf/replay/dist"
)

// Validator checks a deployment's predictions against a measurement of
// its classes: it draws representative packets of each class from the
// trace, recording what the interface predicts for each, and compares
// those predictions with what was measured of them. The timing itself
// (package classtime) needs a kernel and stays with the caller.
type Validator struct {
	d     *Deployment
	preds map[int]prediction // by packet index
	class map[string]int     // by class name
}

// prediction is what the interface and the interpreter say of one packet.
type prediction struct {
	cost    float64 // the interface's cost
	counted float64 // the interpreter's count of the metric (NaN under cost)
}

// offPath names the packets no explored path prices.
const offPath = "off-path"

// Validator starts a check of the deployment's predictions.
func (d *Deployment) Validator() *Validator {
	return &Validator{d: d, preds: map[int]prediction{}, class: map[string]int{}}
}

// Representatives replays the trace from state and draws up to perClass
// packets of every class (replay.Representatives), recording each one's
// prediction. Packets on no explored path are left out. Rep.Class names
// the class as Measured.Name must.
func (v *Validator) Representatives(ctx context.Context, trace string, state *mapstate.State, perClass int) ([]replay.Rep, error) {
	d := v.d
	classOf := func(pkt *replay.Packet) string {
		pc, ok := d.Price(pkt)
		if !ok {
			return offPath
		}
		v.preds[pkt.Index] = prediction{cost: pc.Cost, counted: interpCount(d.It.Metric, pkt)}
		name := fmt.Sprintf("class %d", pc.Class)
		v.class[name] = pc.Class
		return name
	}
	reps, err := replay.Representatives(ctx, d.Prog(), trace, d.ReplayOptions(state), perClass, classOf)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(reps, func(r replay.Rep) bool { return r.Class == offPath }), nil
}

// interpCount is what the interpreter counted of a metric on a run.
func interpCount(metric string, pkt *replay.Packet) float64 {
	switch metric {
	case MetricInsns:
		return float64(pkt.Result.Count)
	case MetricMem:
		n := 0
		for i := range pkt.Result.Loads {
			n += pkt.Result.Loads[i] + pkt.Result.Stores[i]
		}
		return float64(n)
	}
	return math.NaN()
}

// Measurement is what the kernel measured of the representatives.
type Measurement struct {
	Runs     int     // single runs per representative
	Overhead float64 // harness overhead subtracted, ns
	Classes  []Measured
}

// Measured is one class's measurement.
type Measured struct {
	Name string // the class as Rep.Class names it
	Reps int    // representatives timed
	// Net is the median single-run time net of the harness; Repeat the
	// time per run repeated from one state, NaN where the class takes
	// more than one path when repeated.
	Net, Repeat float64
}

// Validation is the check of every measured class.
type Validation struct {
	Metric   string
	Runs     int
	Overhead float64
	Rows     []ValidationRow // by class
}

// ValidationRow is one class's predicted and measured figures. Under
// MetricCost the measured figure is the median single-run time net of the
// harness; under the counting metrics it is the interpreter's count, and
// the kernel times are shown beside it.
type ValidationRow struct {
	Class     int // index into Deployment.Classes
	Reps      int
	Predicted float64 // the interface's figure (median over the representatives)
	Measured  float64 // ns under MetricCost, else the interpreter's count
	// Net and Repeat are the kernel's times, ns (see Measured).
	Net, Repeat float64
	// Error is the verdict: (Predicted - Measured) / Measured. Under the
	// counting metrics every representative must agree, so a single one
	// that does not gives the row its figures.
	Error float64
}

// Validate compares the recorded predictions of the representatives with
// the measurement of their classes.
func (v *Validator) Validate(reps []replay.Rep, m Measurement) *Validation {
	metric := v.d.It.Metric
	byClass := map[string][]replay.Rep{}
	for _, r := range reps {
		byClass[r.Class] = append(byClass[r.Class], r)
	}
	out := &Validation{Metric: metric, Runs: m.Runs, Overhead: m.Overhead}
	for _, c := range m.Classes {
		var ps, cs []float64
		for _, r := range byClass[c.Name] {
			ps = append(ps, v.preds[r.Index].cost)
			cs = append(cs, v.preds[r.Index].counted)
		}
		row := ValidationRow{Class: v.class[c.Name], Reps: c.Reps, Net: c.Net, Repeat: c.Repeat}
		row.Predicted, _ = dist.Percentile(ps, 50)
		row.Measured = c.Net
		if metric != MetricCost {
			row.Measured, _ = dist.Percentile(cs, 50)
			// Every representative, not only the median, must agree.
			for i := range ps {
				if ps[i] != cs[i] {
					row.Measured = cs[i]
					row.Predicted = ps[i]
				}
			}
		}
		row.Error = (row.Predicted - row.Measured) / row.Measured
		out.Rows = append(out.Rows, row)
	}
	slices.SortStableFunc(out.Rows, func(a, b ValidationRow) int { return a.Class - b.Class })
	return out
}

// Write prints the rows as a table of Python comments, with the median
// absolute percentage error, and under MetricCost the error against the
// repeat figure.
func (v *Validation) Write(w io.Writer) error {
	actual := "measured ns"
	if v.Metric != MetricCost {
		actual = "interpreter"
	}
	fmt.Fprintf(w, "\n# Per class, BPF_PROG_TEST_RUN: %d single runs per representative after restoring its map state; harness overhead %.0f ns subtracted\n", v.Runs, v.Overhead)
	var errs []float64
	err := commented(w, tabwriter.AlignRight, func(tw io.Writer) {
		fmt.Fprintf(tw, "class\treps\tpredicted\t%s\terror\tnet ns\trepeat ns\t\n", actual)
		for _, r := range v.Rows {
			errs = append(errs, math.Abs(r.Error))
			fmt.Fprintf(tw, "class %d\t%d\t%s\t%s\t%+.1f%%\t%.0f\t%.0f\t\n", r.Class, r.Reps, trimFloat(r.Predicted), trimFloat(r.Measured), 100*r.Error, r.Net, r.Repeat)
		}
	})
	if err != nil {
		return err
	}
	med, err := dist.Percentile(errs, 50)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "# median absolute percentage error over %d classes: %.1f%%\n", len(v.Rows), 100*med)
	if v.Metric != MetricCost {
		return nil
	}
	// Calibrated targets time repeated runs with warm caches: the repeat
	// figure is their like, where the class has one.
	var rerrs []float64
	for _, r := range v.Rows {
		if !math.IsNaN(r.Repeat) && r.Repeat > 0 {
			rerrs = append(rerrs, math.Abs(r.Predicted-r.Repeat)/r.Repeat)
		}
	}
	if med, err := dist.Percentile(rerrs, 50); err == nil {
		fmt.Fprintf(w, "# against the repeat figure (warm caches; %d classes that take one path when repeated): %.1f%%\n", len(rerrs), 100*med)
	}
	return nil
}
