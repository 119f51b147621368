package report

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/dpperf/dpperf/profile/analyze"
	"github.com/dpperf/dpperf/profile/path"
)

// Metrics serves cumulative per-stage latency histograms in the Prometheus
// text exposition format (version 0.0.4):
//
//	dpperf_profile_latency_seconds_bucket{path,group,stage,le}
//	dpperf_profile_latency_seconds_sum / _count
//
// stage="end-to-end" is the whole request. Buckets are powers of two from
// 1µs to about 2s.
type Metrics struct {
	// Contents selects the series: breakdown the stages, latency the
	// end-to-end one (empty: both).
	Contents analyze.Contents
	mu       sync.Mutex
	agg      *analyze.Aggregator
	p        *path.Path
}

// NewMetrics returns an empty metrics set for path p.
func NewMetrics(p *path.Path, by analyze.GroupBy) *Metrics {
	return &Metrics{agg: analyze.NewAggregator(by), p: p}
}

// Add merges the records of one interval.
func (m *Metrics) Add(a *analyze.Aggregator) {
	m.mu.Lock()
	m.agg.Merge(a)
	m.mu.Unlock()
}

var promBounds = func() []int64 {
	var b []int64
	for v := int64(1000); v <= 2_100_000_000; v *= 2 {
		b = append(b, v)
	}
	return b
}()

// ServeHTTP writes the metrics.
func (m *Metrics) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	m.mu.Lock()
	defer m.mu.Unlock()
	_ = WriteMetrics(w, m.agg, m.p, m.Contents)
}

// WriteMetrics writes a's histograms in the Prometheus text format: the
// stages' with the breakdown content, the end-to-end one with latency.
func WriteMetrics(w io.Writer, a *analyze.Aggregator, p *path.Path, parts analyze.Contents) error {
	bw := &errWriter{w: w}
	fmt.Fprintln(bw, "# HELP dpperf_profile_latency_seconds Time requests spent in each stage of the I/O path.")
	fmt.Fprintln(bw, "# TYPE dpperf_profile_latency_seconds histogram")
	a.Each(p, func(group, stage string, h *analyze.Hist) {
		if stage == "" {
			if !parts.Has(analyze.ContentLatency) {
				return
			}
			stage = "end-to-end"
		} else if !parts.Has(analyze.ContentBreakdown) {
			return
		}
		labels := fmt.Sprintf(`path=%q,group=%q,stage=%q`, p.Name, group, promEscape(stage))
		for i, c := range h.CountAtMost(promBounds) {
			fmt.Fprintf(bw, "dpperf_profile_latency_seconds_bucket{%s,le=\"%g\"} %d\n", labels, float64(promBounds[i])/1e9, c)
		}
		fmt.Fprintf(bw, "dpperf_profile_latency_seconds_bucket{%s,le=\"+Inf\"} %d\n", labels, h.Count())
		fmt.Fprintf(bw, "dpperf_profile_latency_seconds_sum{%s} %g\n", labels, h.Sum()/1e9)
		fmt.Fprintf(bw, "dpperf_profile_latency_seconds_count{%s} %d\n", labels, h.Count())
	})
	return bw.err
}

func promEscape(s string) string { return strings.ReplaceAll(s, `"`, `'`) }
