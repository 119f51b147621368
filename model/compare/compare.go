package compare

import (
	"context"
	"fmt"
	"io"
	"math"
	"text/tabwriter"

	"github.com/dpperf/dpperf/model/analytic"
	"github.com/dpperf/dpperf/model/flow"
	"github.com/dpperf/dpperf/model/sim"
	"github.com/dpperf/dpperf/units"
)

// Schema names the JSON form of a Comparison (json.md).
const Schema = "dpperf.model.compare/v1"

// CapacityFactor is the load of the capacity run, as a multiple of the
// model's attainable throughput: enough above it that the bottleneck never
// idles.
const CapacityFactor = 1.25

// Comparison is the model against the simulation of one network.
type Comparison struct {
	Schema string           `json:"schema"`
	Rows   []Row            `json:"rows"`
	Model  *analytic.Result `json:"model"`
	Sim    *sim.Result      `json:"simulation"`
	// Capacity is the simulation at CapacityFactor times the model's
	// attainable throughput with unbounded queues.
	Capacity *sim.Result `json:"saturation"`
}

// Row is one metric of model and simulation.
type Row struct {
	Metric string    `json:"metric"`
	Model  units.Num `json:"model"` // NaN: the model gives none
	Sim    units.Num `json:"simulation"`
	Error  units.Num `json:"relative_error"` // (model − simulation)/simulation
	Unit   string    `json:"-"`              // "B/s", "s" or "" (a share)
	// Checked says a limit on the error applies (Comparison.Exceeding):
	// the throughputs and the mean latency, which the model claims.
	Checked bool `json:"-"`
}

// Run evaluates n with the model and simulates it with o twice: at its
// offered load, and for the attainable throughput at CapacityFactor times
// the model's with unbounded queues. n's offered load is restored before
// Run returns. An interrupted simulation returns its error (with
// ctx.Err() for a cancellation) and no comparison.
func Run(ctx context.Context, n *flow.Network, o sim.Options) (*Comparison, error) {
	m := analytic.Evaluate(n)
	o.Unbounded = false
	s, err := sim.Run(ctx, n, o)
	if err != nil {
		return nil, err
	}
	offered := n.Offered
	n.Offered = CapacityFactor * float64(m.Throughput)
	o.Unbounded = true
	capacity, err := sim.Run(ctx, n, o)
	n.Offered = offered
	if err != nil {
		return nil, err
	}
	c := &Comparison{Schema: Schema, Model: m, Sim: s, Capacity: capacity}
	row := func(name, unit string, checked bool, mv, sv float64) {
		c.Rows = append(c.Rows, Row{Metric: name, Model: units.Num(mv), Sim: units.Num(sv), Error: units.Num(relErr(mv, sv)),
			Unit: unit, Checked: checked})
	}
	row("throughput at offered load (B/s)", "B/s", true, float64(m.Carried), float64(s.Throughput))
	row("attainable throughput (B/s)", "B/s", true, float64(m.Throughput), float64(capacity.Throughput))
	row("mean latency (s)", "s", true, float64(m.Latency), float64(s.Latency))
	row("drop share", "", false, float64(m.DropShare), float64(s.DropShare))
	row("p99 latency (s)", "s", false, math.NaN(), float64(s.P99))
	return c, nil
}

func relErr(model, sim float64) float64 {
	if math.IsNaN(model) || math.IsNaN(sim) || sim == 0 {
		return math.NaN()
	}
	return (model - sim) / sim
}

// Exceeding returns the first checked row whose relative error is above
// percent (5 for 5%), if any.
func (c *Comparison) Exceeding(percent float64) (Row, bool) {
	for _, r := range c.Rows {
		if r.Checked && math.Abs(float64(r.Error))*100 > percent {
			return r, true
		}
	}
	return Row{}, false
}

// WriteText prints the comparison as a table for people.
func (c *Comparison) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "bottleneck (model)\t%s\n", c.Model.Bottleneck)
	fmt.Fprintf(tw, "simulation\t%d packets, %s service; capacity run (unbounded queues) at %s\n\n", c.Sim.Packets, c.Sim.Service,
		units.FormatRate(float64(c.Capacity.Offered)))
	fmt.Fprintln(tw, "METRIC\tMODEL\tSIMULATION\tERROR")
	for _, r := range c.Rows {
		e := "-"
		if !math.IsNaN(float64(r.Error)) {
			e = fmt.Sprintf("%+.2f%%", 100*float64(r.Error))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Metric, r.format(r.Model), r.format(r.Sim), e)
	}
	return tw.Flush()
}

// format writes a value of the row in its unit.
func (r Row) format(v units.Num) string {
	x := float64(v)
	switch {
	case math.IsNaN(x):
		return "-"
	case r.Unit == "s":
		return units.FormatTime(x)
	case r.Unit == "B/s":
		return units.FormatRate(x)
	}
	return fmt.Sprintf("%.4g", x)
}
