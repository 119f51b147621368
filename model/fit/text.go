package fit

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/dpperf/dpperf/units"
)

// WriteText prints the fitted stage and its points for people.
func (r *CurveReport) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	stage := r.IP
	if r.Vertex != "" {
		stage += " (vertex " + r.Vertex + ")"
	}
	fmt.Fprintf(tw, "stage\t%s\n", stage)
	fmt.Fprintf(tw, "request size\t%s\n", units.FormatSize(math.Round(float64(r.Size))))
	fmt.Fprintf(tw, "fitted\t%s\n", strings.Join(r.Fitted, ", "))
	fmt.Fprintf(tw, "throughput\t%s\n", units.FormatRate(float64(r.Throughput)))
	fmt.Fprintf(tw, "parallelism\t%g\n", float64(r.Parallelism))
	q := fmt.Sprintf("%g", float64(r.Queue))
	if math.IsInf(float64(r.Queue), 1) {
		q = "unbounded"
	}
	fmt.Fprintf(tw, "queue\t%s\n", q)
	fmt.Fprintf(tw, "overhead\t%s\n", units.FormatTime(float64(r.Overhead)))
	fmt.Fprintf(tw, "distance (%s)\tRMS %.3f, max %.3f\n", r.Distance, float64(r.RMS), float64(r.MaxErr))
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "LOAD\tLATENCY\tMODEL LATENCY AT LOAD\tMODEL LOAD AT LATENCY\t")
	for _, p := range r.Points {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t\n", units.FormatRate(float64(p.Load)), units.FormatTime(float64(p.Latency)),
			units.FormatTime(float64(p.Model)), units.FormatRate(float64(p.ModelLoad)))
	}
	return tw.Flush()
}

// WriteText prints the fitted path, and its check, for people.
func (r *PathReport) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "path %s, group %s, fitted to %s\n\n", r.Path, r.Group, strings.Join(r.From, ", "))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "STAGE\tQUEUE\tENGINES\tSERVICE\tTHROUGHPUT\tFITTED")
	for _, s := range r.Stages {
		fmt.Fprintf(tw, "%s\t%s\t%g\t%s\t%s\t%s\n", s.Name, s.Queue, float64(s.Parallelism), units.FormatTime(float64(s.Service)),
			units.FormatRate(float64(s.Throughput)), strings.Join(s.Fitted, ","))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if r.Check == nil {
		return nil
	}
	fmt.Fprintf(w, "\npredicted at the load of %s (%s):\n", r.Check.Profile, units.FormatRate(float64(r.Check.Load)))
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "STAGE\tMEASURED\tMODEL\tERROR\tRHO")
	for _, row := range r.Check.Rows {
		model, e := "saturated", "-"
		if !math.IsInf(float64(row.Model), 1) {
			model, e = units.FormatTime(float64(row.Model)), fmt.Sprintf("%+.1f%%", 100*float64(row.Error))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.3f\n", row.Stage, units.FormatTime(float64(row.Measured)), model, e, float64(row.Rho))
	}
	return tw.Flush()
}
