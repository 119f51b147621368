package lognic

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/dpperf/dpperf/units"
)

// CompatSchema names the JSON form of a CompatReport (json.md).
const CompatSchema = "dpperf.model.lognic/v1"

// CompatReport is a CompatResult as JSON (`dpperf model estimate --compat
// lognic`): rates in GiB/s, times in seconds, as the LogNIC
// implementation prints them.
type CompatReport struct {
	Schema     string      `json:"schema"`
	Throughput units.Num   `json:"throughput_GiBps"`
	Bottleneck string      `json:"bottleneck"` // the smallest candidate
	Candidates []Candidate `json:"candidates"`
	PerCase    []units.Num `json:"use_case_throughput_GiBps"`
	Latency    units.Num   `json:"latency_s"` // null when unavailable
	CaseLat    []units.Num `json:"use_case_latency_s"`
	// LatencyUnavailable says why the file gives no latency.
	LatencyUnavailable string `json:"latency_unavailable,omitempty"`
}

// Report returns the result as JSON.
func (r *CompatResult) Report() *CompatReport {
	out := &CompatReport{Schema: CompatSchema, Throughput: units.Num(r.Throughput), Candidates: r.Candidates, Latency: units.Num(r.Latency),
		LatencyUnavailable: r.LatencyUnavailable}
	if len(r.Candidates) > 0 {
		out.Bottleneck = r.Candidates[0].Name
	}
	for _, v := range r.PerCase {
		out.PerCase = append(out.PerCase, units.Num(v))
	}
	for _, v := range r.CaseLat {
		out.CaseLat = append(out.CaseLat, units.Num(v))
	}
	return out
}

// WriteText prints the result for people, with the implementation's
// precision.
func (r *CompatResult) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "semantics\tlognic (compatibility)\n")
	fmt.Fprintf(tw, "throughput\t%.10g GiB/s\n", r.Throughput)
	if len(r.Candidates) > 0 {
		fmt.Fprintf(tw, "bottleneck\t%s\n", r.Candidates[0].Name)
	}
	for _, c := range r.Candidates {
		fmt.Fprintf(tw, "  %s\t%.10g\n", c.Name, c.Value)
	}
	for i, v := range r.PerCase {
		fmt.Fprintf(tw, "use case %d\t%.10g GiB/s\n", i, v)
	}
	for i, v := range r.CaseLat {
		fmt.Fprintf(tw, "latency of use case %d\t%.6f us\n", i, v*1e6)
	}
	if r.LatencyUnavailable != "" {
		fmt.Fprintf(tw, "latency\tunavailable: %s\n", r.LatencyUnavailable)
	} else {
		fmt.Fprintf(tw, "latency\t%.6f us\n", r.Latency*1e6)
	}
	return tw.Flush()
}
