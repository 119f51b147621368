// Package report renders profiles and comparisons for people (aligned
// text, HTML) and machines (JSON, schema in schema.md). It only formats:
// every number comes from package analyze.
package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/dpperf/dpperf/profile/analyze"
)

// Columns selects the aggregators shown per distribution: "min", "avg",
// "max" and percentiles "p50", "p99.9" ... Unknown names are ignored.
type Columns []string

// DefaultColumns are the columns of the text report.
var DefaultColumns = Columns{"min", "avg", "p10", "p50", "p70", "p80", "p90", "p95", "p99", "p99.9", "max"}

func (c Columns) values(d *analyze.Dist) []string {
	var out []string
	for _, name := range c {
		switch name = strings.ToLower(name); {
		case name == "min":
			out = append(out, analyze.FormatNS(float64(d.MinNS)))
		case name == "max":
			out = append(out, analyze.FormatNS(float64(d.MaxNS)))
		case name == "avg":
			out = append(out, analyze.FormatNS(d.MeanNS))
		case strings.HasPrefix(name, "p"):
			p, err := strconv.ParseFloat(name[1:], 64)
			if v := d.P(p); err == nil && v >= 0 {
				out = append(out, analyze.FormatNS(float64(v)))
			}
		}
	}
	return out
}

func (c Columns) has(name string) bool {
	for _, x := range c {
		if strings.EqualFold(x, name) {
			return true
		}
	}
	return false
}

// distText draws the whole request's latency distribution (span: Q→C on
// the block path) as bars.
func distText(w io.Writer, span string, d []analyze.Bucket) {
	var most uint64
	for _, b := range d {
		most = max(most, b.Count)
	}
	if most == 0 {
		return
	}
	fmt.Fprintf(w, "%s latency distribution:\n", span)
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', tabwriter.AlignRight)
	lo := int64(0)
	for _, b := range d {
		bar := strings.Repeat("#", int((b.Count*40+most-1)/most))
		fmt.Fprintf(tw, "  [%s,\t%s)\t%d\t %s\n", analyze.FormatNS(float64(lo)), analyze.FormatNS(float64(b.LessNS)), b.Count, bar)
		lo = b.LessNS
	}
	tw.Flush()
}

func (c Columns) header() []string {
	var out []string
	for _, name := range c {
		name = strings.ToLower(name)
		if name == "min" || name == "max" || name == "avg" || (strings.HasPrefix(name, "p") && isPercentile(name[1:])) {
			out = append(out, name)
		}
	}
	return out
}

func isPercentile(s string) bool {
	p, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return false
	}
	for _, x := range analyze.Percentiles {
		if x == p {
			return true
		}
	}
	return false
}

// Text writes the profile as aligned tables.
func Text(w io.Writer, p *analyze.Profile, cols Columns) error {
	if len(cols) == 0 {
		cols = DefaultColumns
	}
	bw := &errWriter{w: w}
	fmt.Fprintf(bw, "path %s, source %s, window %.3fs, sample 1/%d", p.Path, p.Source, p.Window.Seconds, p.Sample)
	if p.Filter != "" {
		fmt.Fprintf(bw, ", filter %s", p.Filter)
	}
	fmt.Fprintln(bw)
	if p.Source != "interval" { // online reports: the totals come at the end
		countsText(bw, p)
	}
	parts := p.Contents
	for i := range p.Groups {
		g := &p.Groups[i]
		fmt.Fprintf(bw, "\ngroup %s: %d requests", g.Key, g.Requests)
		if parts.Has(analyze.ContentThroughput) {
			fmt.Fprintf(bw, ", %.0f IOPS, %.1f MB/s", g.IOPS, g.MBps)
		}
		if parts.Has(analyze.ContentQueue) {
			fmt.Fprintf(bw, ", %.2f in flight on average", g.Occupancy)
		}
		fmt.Fprintln(bw)
		groupTable(bw, g, profileSpan(p), cols, parts)
		if parts.Has(analyze.ContentLatency) && cols.has("dist") {
			distText(bw, profileSpan(p), g.Distribution)
		}
	}
	return bw.err
}

// groupTable writes the stage rows (breakdown) and the row of the whole
// request, named span (latency), of one group.
func groupTable(w io.Writer, g *analyze.Group, span string, cols Columns, parts analyze.Contents) {
	breakdown, latency, queue := parts.Has(analyze.ContentBreakdown), parts.Has(analyze.ContentLatency), parts.Has(analyze.ContentQueue)
	if !breakdown && !latency {
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := append([]string{"stage", "queue", "cause", "count"}, cols.header()...)
	if breakdown {
		head = append(head, "share")
	}
	if queue {
		head = append(head, "occupancy")
	}
	fmt.Fprintln(tw, strings.Join(append(head, ""), "\t"))
	row := func(name, queueClass, cause string, d *analyze.Dist, share string, occ float64) {
		r := append([]string{name, queueClass, cause, strconv.FormatUint(d.Count, 10)}, cols.values(d)...)
		if breakdown {
			r = append(r, share)
		}
		if queue {
			r = append(r, fmt.Sprintf("%.3f", occ))
		}
		fmt.Fprintln(tw, strings.Join(append(r, ""), "\t"))
	}
	if breakdown {
		for _, s := range g.Stages {
			name := s.Name
			if s.Merged {
				name += " (merged)"
			}
			if s.ClockBoundNS > 0 {
				name += " ±" + analyze.FormatNS(s.ClockBoundNS)
			}
			row(name, s.Queue, s.Cause, &s.Latency, fmt.Sprintf("%.1f%%", 100*s.Share), s.Occupancy)
		}
	}
	if latency {
		row(span, "", "", &g.Latency, "100.0%", g.Occupancy)
	}
	tw.Flush()
}

// countsText writes the bookkeeping lines: counts, unobserved events,
// warnings.
func countsText(bw io.Writer, p *analyze.Profile) {
	c := p.Counts
	fmt.Fprintf(bw, "events %d, records %d complete, %d analyzed, %d open at end, %d orphan events, %d restarted, %d evicted, %d lost by the kernel\n",
		c.Events, c.Records, c.Analyzed, c.Open, c.Orphans, c.Restarted, c.Evicted, c.Lost)
	var missing []string
	for _, e := range p.Events {
		if !e.Observed || e.Count == 0 {
			missing = append(missing, fmt.Sprintf("%s (%s: %s)", e.Name, e.Probe, e.Reason))
		}
	}
	if len(missing) > 0 {
		fmt.Fprintf(bw, "not observed: %s; the stages around them are reported merged\n", strings.Join(missing, "; "))
	}
	if h := p.Hosts; h != nil {
		hostsText(bw, h)
	}
	for _, wmsg := range p.Warnings {
		fmt.Fprintf(bw, "warning: %s\n", wmsg)
	}
	if k := p.Collector; k != nil {
		fmt.Fprintf(bw, "collector cost: %d BPF program runs, %.0f ns each, %.0f ns per request, %.2f%% of one CPU\n",
			k.Runs, k.NSPerRun, k.NSPerReq, k.CPUPercent)
		for _, pc := range k.Programs {
			fmt.Fprintf(bw, "  %-20s %10d runs %6.0f ns each\n", pc.Name, pc.Runs, pc.NSPerRun)
		}
	}
}

// hostsText writes the join and clock lines of a two-host profile.
func hostsText(bw io.Writer, h *analyze.Hosts) {
	j := h.Join
	share := 0.0
	if j.Initiator > 0 {
		share = 100 * float64(j.Joined) / float64(j.Initiator)
	}
	fmt.Fprintf(bw, "hosts: %d of %d initiator requests joined with the target's %d (%.1f%%), %d shifted into their span\n",
		j.Joined, j.Initiator, j.Target, share, j.Shifted)
	if c := h.Clock; c != nil {
		fmt.Fprintf(bw, "clock: target = initiator %+.0f ns ±%s, drift %+.2f ppm (from %d requests, %d windows); stages marked ± cross hosts\n",
			c.OffsetNS, analyze.FormatNS(c.ErrorBoundNS), c.DriftPPM, c.Requests, c.Windows)
	}
}

// CompareText writes a comparison as aligned tables with the verdict.
func CompareText(w io.Writer, c *analyze.Comparison) error {
	bw := &errWriter{w: w}
	fmt.Fprintf(bw, "base %s, loaded %s\n", c.Base, c.Loaded)
	for _, u := range c.Unmatched {
		fmt.Fprintf(bw, "unmatched group: %s\n", u)
	}
	for _, g := range c.Groups {
		fmt.Fprintf(bw, "\ngroup %s: mean %s -> %s, LAD %.2f\n", g.Key, analyze.FormatNS(g.BaseMeanNS), analyze.FormatNS(g.LoadedMeanNS), g.LAD)
		tw := tabwriter.NewWriter(bw, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "stage\tcause\tbase avg\tloaded avg\tLAD\tdelta\tshare of increase\t")
		for _, s := range g.Stages {
			lad := "n/a"
			if s.LAD > 0 {
				lad = fmt.Sprintf("%.2f", s.LAD)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%.1f%%\t\n", s.Name, s.Cause, analyze.FormatNS(s.BaseMeanNS), analyze.FormatNS(s.LoadedMeanNS),
				lad, analyze.FormatNS(s.DeltaNS), 100*s.ShareOfIncrease)
		}
		tw.Flush()
		if len(g.Bottleneck) > 0 {
			fmt.Fprintf(bw, "bottleneck: %s\n", strings.Join(g.Bottleneck, ", "))
		}
		fmt.Fprintf(bw, "verdict: %s\n", g.Verdict)
	}
	return bw.err
}

type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}
