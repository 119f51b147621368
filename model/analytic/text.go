package analytic

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/dpperf/dpperf/units"
)

// WriteText prints a result as aligned tables for people.
func (r *Result) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	p := func(f string, a ...any) { fmt.Fprintf(tw, f, a...) }
	if r.Name != "" {
		p("model\t%s\n", r.Name)
	}
	p("semantics\t%s\n", r.Semantics)
	p("offered load\t%s\n", units.FormatRate(float64(r.Offered)))
	p("attainable throughput\t%s\n", units.FormatRate(float64(r.Throughput)))
	p("bottleneck\t%s\n", r.Bottleneck)
	p("carried at offered load\t%s\n", units.FormatRate(float64(r.Carried)))
	p("mean latency\t%s\n", units.FormatTime(float64(r.Latency)))
	p("drops\t%.4g%% of packets (%.4g pkt/s)\n", 100*float64(r.DropShare), float64(r.DropRate))
	p("\n")
	p("COMPONENT\tKIND\tCAPACITY\tUTIL@OFFERED\tHEADROOM\t\n")
	for _, c := range r.Components {
		mark := ""
		if c.Binding {
			mark = "<- bottleneck"
		}
		p("%s\t%s\t%s\t%.3f\t%.1f%%\t%s\n", c.Name, c.Kind, units.FormatRate(float64(c.Capacity)), float64(c.Util), 100*float64(c.Headroom), mark)
	}
	p("\n")
	p("STATION\tENGINES\tQUEUE\tRHO\tMEAN IN SYSTEM\tSERVICE\tWAIT\tDROP\n")
	for _, s := range r.Stations {
		p("%s\t%g\t%g\t%.3f\t%.3f\t%s\t%s\t%.3g\n", s.Name, float64(s.Engines), float64(s.Queue), float64(s.Rho), float64(s.Mean),
			units.FormatTime(float64(s.Service)), units.FormatTime(float64(s.Wait)), float64(s.Drop))
	}
	p("\n")
	p("GRAPH\tSIZE\tWEIGHT\tTHROUGHPUT\tLATENCY\tCRITICAL PATH\tDROP\n")
	for _, c := range r.Classes {
		p("%s\t%s\t%.3f\t%s\t%s\t%s\t%.3g\n", c.Graph, units.FormatSize(float64(c.Size)), float64(c.Weight),
			units.FormatRate(float64(c.Throughput)), units.FormatTime(float64(c.Latency)), units.FormatTime(float64(c.Critical)), float64(c.Drop))
	}
	return tw.Flush()
}
