package sim

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/dpperf/dpperf/units"
)

// WriteText prints a result as aligned tables for people.
func (r *Result) WriteText(w io.Writer) error {
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
