package report

import (
	"io"
	"net/http"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/expfmt"

	"github.com/dpperf/dpperf/profile/analyze"
	"github.com/dpperf/dpperf/profile/path"
)

// Metrics serves cumulative per-stage latency histograms to Prometheus
// (github.com/prometheus/client_golang):
//
//	dpperf_profile_latency_seconds_bucket{path,group,stage,le}
//	dpperf_profile_latency_seconds_sum / _count
//	dpperf_profile_sample_ratio
//
// The whole request is the stage named by the path's first and last
// events, stage="Q→C" on the block path. Buckets are powers of two from
// 1µs to about 2s. The counts are of the recorded requests; the sample
// ratio (1/N with --sample N) turns their rates into the rates of all
// requests.
type Metrics struct {
	// Contents selects the series: breakdown the stages, latency the
	// whole request's (empty: both).
	Contents analyze.Contents
	// Sample is N of "keep 1 of N requests" (0 counts as 1).
	Sample  uint32
	mu      sync.Mutex
	agg     *analyze.Aggregator
	p       *path.Path
	handler http.Handler
}

// NewMetrics returns an empty metrics set for path p.
func NewMetrics(p *path.Path, by analyze.GroupBy) *Metrics {
	m := &Metrics{agg: analyze.NewAggregator(by), p: p}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collector{m})
	m.handler = promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	return m
}

// Add merges the records of one interval.
func (m *Metrics) Add(a *analyze.Aggregator) {
	m.mu.Lock()
	m.agg.Merge(a)
	m.mu.Unlock()
}

// ServeHTTP serves the metrics (the text or protobuf format the scraper
// asks for).
func (m *Metrics) ServeHTTP(w http.ResponseWriter, r *http.Request) { m.handler.ServeHTTP(w, r) }

var promBounds = func() []int64 {
	var b []int64
	for v := int64(1000); v <= 2_100_000_000; v *= 2 {
		b = append(b, v)
	}
	return b
}()

var latencyDesc = prometheus.NewDesc("dpperf_profile_latency_seconds", "Time requests spent in each stage of the I/O path.",
	[]string{"path", "group", "stage"}, nil)

// collector turns the aggregated histograms into Prometheus histograms
// at each scrape.
type collector struct{ m *Metrics }

var sampleDesc = prometheus.NewDesc("dpperf_profile_sample_ratio", "Fraction of the requests the collector records (1/N with --sample N): divide the latency counts' rates by it for the rates of all requests.",
	nil, nil)

func (c collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- latencyDesc
	ch <- sampleDesc
}

func (c collector) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(sampleDesc, prometheus.GaugeValue, 1/float64(max(c.m.Sample, 1)))
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	collectHists(ch, c.m.agg, c.m.p, c.m.Contents)
}

// collectHists sends a's histograms: the stages' with the breakdown
// content, the whole request's with latency.
func collectHists(ch chan<- prometheus.Metric, a *analyze.Aggregator, p *path.Path, parts analyze.Contents) {
	a.Each(p, func(group, stage string, h *analyze.Hist) {
		if stage == "" {
			if !parts.Has(analyze.ContentLatency) {
				return
			}
			stage = pathSpan(p)
		} else if !parts.Has(analyze.ContentBreakdown) {
			return
		}
		buckets := map[float64]uint64{}
		for i, n := range h.CountAtMost(promBounds) {
			buckets[float64(promBounds[i])/1e9] = n
		}
		ch <- prometheus.MustNewConstHistogram(latencyDesc, h.Count(), h.Sum()/1e9, buckets, p.Name, group, stage)
	})
}

// WriteMetrics writes a's histograms in the Prometheus text exposition
// format, as a scrape of Metrics would return them.
func WriteMetrics(w io.Writer, a *analyze.Aggregator, p *path.Path, parts analyze.Contents) error {
	reg := prometheus.NewRegistry()
	if err := reg.Register(fixedCollector{a, p, parts}); err != nil {
		return err
	}
	families, err := reg.Gather()
	if err != nil {
		return err
	}
	enc := expfmt.NewEncoder(w, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, f := range families {
		if err := enc.Encode(f); err != nil {
			return err
		}
	}
	return nil
}

// fixedCollector collects one aggregator's histograms.
type fixedCollector struct {
	a     *analyze.Aggregator
	p     *path.Path
	parts analyze.Contents
}

func (c fixedCollector) Describe(ch chan<- *prometheus.Desc) { ch <- latencyDesc }
func (c fixedCollector) Collect(ch chan<- prometheus.Metric) { collectHists(ch, c.a, c.p, c.parts) }
