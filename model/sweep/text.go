package sweep

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/dpperf/dpperf/units"
)

// WriteText prints the sweep as a table for people, with the simulated
// columns when simulated.
func (r *Result) WriteText(w io.Writer, simulated bool) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%s\tTHROUGHPUT\tCARRIED\tLATENCY\tDROP\t", r.Param)
	if simulated {
		fmt.Fprint(tw, "SIM THROUGHPUT\tSIM LATENCY\tSIM P99\t")
	}
	fmt.Fprintln(tw, "BOTTLENECK\t")
	for _, p := range r.Points {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.3g\t", r.formatValue(float64(p.Value)), units.FormatRate(float64(p.Throughput)),
			units.FormatRate(float64(p.Carried)), units.FormatTime(float64(p.Latency)), float64(p.Drop))
		if simulated {
			fmt.Fprintf(tw, "%s\t%s\t%s\t", units.FormatRate(float64(p.SimThr)), units.FormatTime(float64(p.SimLatency)), units.FormatTime(float64(p.SimP99)))
		}
		fmt.Fprintf(tw, "%s\t\n", p.Bottleneck)
	}
	return tw.Flush()
}

// formatValue writes a value of the swept parameter in its unit.
func (r *Result) formatValue(v float64) string {
	switch r.Unit {
	case "B/s":
		return units.FormatRate(v)
	case "s":
		return units.FormatTime(v)
	case "B":
		return units.FormatSize(v)
	}
	return fmt.Sprintf("%g", v)
}
