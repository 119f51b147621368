package calibrate

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/dpperf/dpperf/target"
)

// Report is the JSON of `dpperf targets calibrate --json` (json.md).
type Report struct {
	Schema      string       `json:"schema"`
	Target      string       `json:"target"`
	File        string       `json:"file"`
	Percentile  float64      `json:"percentile"`
	Costs       []ReportCost `json:"costs"`
	NotMeasured []string     `json:"not_measured"`
	Notes       []string     `json:"notes"`
}

// ReportCost is one measured cost of a Report with its spread over the
// runs.
type ReportCost struct {
	Cost    string  `json:"cost"`
	NS      float64 `json:"ns"`
	Min     float64 `json:"min_ns"`
	Median  float64 `json:"median_ns"`
	High    float64 `json:"high_ns"`
	Max     float64 `json:"max_ns"`
	Variant string  `json:"variant"`
}

// Report describes the calibration that gave t, written to file.
func (r *Result) Report(t *target.Target, file string) *Report {
	c := &Report{Schema: "dpperf.calibration/v1", Target: t.Name, File: file, Percentile: r.Options.Percentile,
		Costs: []ReportCost{}, NotMeasured: []string{}, Notes: t.Calibration.Notes}
	if c.Notes == nil {
		c.Notes = []string{}
	}
	seen := map[string]bool{}
	for _, m := range r.Measurements {
		if m.Err != nil {
			c.NotMeasured = append(c.NotMeasured, fmt.Sprintf("%s: %v", m.ID(), m.Err))
			continue
		}
		s, ok := t.Calibration.Spread[m.Key]
		if seen[m.Key] || !ok {
			continue
		}
		seen[m.Key] = true
		c.Costs = append(c.Costs, ReportCost{Cost: m.Key, NS: RoundUp(s.High, 0.01), Min: s.Min, Median: s.Median,
			High: s.High, Max: s.Max, Variant: s.Variant})
	}
	return c
}

// WriteText prints every measured cost with its spread (PCV costs per unit
// of the PCV, pcv.TYPE.PCV), then the micro-programs that failed with the
// reason, then the calibration's notes.
func (c *Report) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "cost\tns\tmin\tmedian\tp%g\tmax\tspread\tvariant\n", c.Percentile)
	for _, s := range c.Costs {
		spread := "-"
		if s.Median > 0 {
			spread = fmt.Sprintf("%.0f%%", 100*(s.Max-s.Min)/s.Median)
		}
		fmt.Fprintf(tw, "%s\t%.3g\t%.3f\t%.3f\t%.3f\t%.3f\t%s\t%s\n", s.Cost, s.NS, s.Min, s.Median, s.High, s.Max, spread, s.Variant)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(c.NotMeasured) > 0 {
		fmt.Fprintf(w, "not measured (estimated from the built-in x86-64 table):\n  %s\n", strings.Join(c.NotMeasured, "\n  "))
	}
	if len(c.Notes) > 0 {
		fmt.Fprintf(w, "notes:\n  %s\n", strings.Join(c.Notes, "\n  "))
	}
	return nil
}
