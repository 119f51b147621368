package report

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dpperf/dpperf/internal/golden"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/dpperf/dpperf/profile/analyze"
	"github.com/dpperf/dpperf/profile/path"
	"github.com/dpperf/dpperf/profile/tracetext"
)

// profileOf analyzes a captured trace (fio on a loop device, Linux 6.18).
func profileOf(t *testing.T, name string) *analyze.Profile {
	t.Helper()
	p, err := path.Builtin("block")
	if err != nil {
		t.Fatal(err)
	}
	src := tracetext.OpenFiles([]string{filepath.Join("..", "testdata", name)}, p)
	defer src.Close()
	a, st, err := analyze.Run(context.Background(), src, analyze.Options{Path: p, GroupBy: analyze.GroupBy{Type: true, Size: true}, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	pr := analyze.Summarize(a, p, 1)
	pr.Source = name
	pr.GroupBy = []string{"type", "size"}
	pr.Counts = analyze.Counts{BuildStats: st, Analyzed: a.Records()}
	for i, e := range p.Events {
		pr.Events = append(pr.Events, analyze.EventInfo{Name: e.Name, Probe: e.Tracepoint, Observed: src.Seen()[i]})
		if !src.Seen()[i] {
			pr.Events[i].Reason = "not in the trace"
		}
	}
	pr.SetEventCounts()
	return pr
}

func TestGoldenProfiles(t *testing.T) {
	for _, name := range []string{"block-qd1", "block-qd32", "block-qd32c"} {
		t.Run(name, func(t *testing.T) {
			pr := profileOf(t, name+".txt.gz")
			var text, js bytes.Buffer
			if err := Text(&text, pr, nil); err != nil {
				t.Fatal(err)
			}
			if err := JSON(&js, pr); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, name+".txt", text.Bytes())
			golden.Check(t, name+".json", js.Bytes())
			back, err := ReadProfile(&js)
			if err != nil {
				t.Fatal(err)
			}
			if back.Groups[0].Latency.MeanNS != pr.Groups[0].Latency.MeanNS {
				t.Error("JSON round trip changed the profile")
			}
		})
	}
}

// The captured traces show the bottleneck the scenario was built for:
// iodepth 32, then a second fio on the same loop device; compare must
// name the device stage.
func TestGoldenCompare(t *testing.T) {
	base, loaded := profileOf(t, "block-qd1.txt.gz"), profileOf(t, "block-qd32c.txt.gz")
	c := analyze.Compare(base, loaded, "block-qd1", "block-qd32c")
	if len(c.Groups) != 1 || c.Groups[0].Key != "read 4KiB" {
		t.Fatalf("groups %+v", c.Groups)
	}
	if b := c.Groups[0].Bottleneck; len(b) == 0 || b[0] != "D2C" || c.Groups[0].Cause != "device" {
		t.Errorf("bottleneck %v cause %s, want D2C/device", b, c.Groups[0].Cause)
	}
	var text, html bytes.Buffer
	if err := CompareText(&text, c); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "compare.txt", text.Bytes())
	if err := HTML(&html, loaded, c); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<svg", "D2C", "Latency amplification", "group read 4KiB", "not observed"} {
		if !strings.Contains(html.String(), want) {
			t.Errorf("HTML lacks %q", want)
		}
	}
}

func TestReadProfileRejects(t *testing.T) {
	for _, in := range []string{"", "{", `{"schema":"other/v1"}`, `[1,2]`} {
		if _, err := ReadProfile(strings.NewReader(in)); err == nil {
			t.Errorf("ReadProfile(%q) accepted", in)
		}
	}
}

func TestMetrics(t *testing.T) {
	p, _ := path.Builtin("block")
	src := tracetext.OpenFiles([]string{"../testdata/block-qd1.txt.gz"}, p)
	defer src.Close()
	a, _, err := analyze.Run(context.Background(), src, analyze.Options{Path: p, GroupBy: analyze.GroupBy{Type: true}})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteMetrics(&buf, a, p, nil); err != nil {
		t.Fatal(err)
	}
	checkScrape(t, buf.String())

	// A scrape of the live endpoint reads the same.
	m := NewMetrics(p, analyze.GroupBy{Type: true})
	m.Sample = 8
	m.Add(a)
	srv := httptest.NewServer(m)
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	checkScrape(t, string(body))
	if !strings.Contains(string(body), "\ndpperf_profile_sample_ratio 0.125\n") {
		t.Errorf("live scrape without the sample ratio 1/8:\n%s", body)
	}
}

// checkScrape parses a scrape with Prometheus' own text parser and checks
// the histograms: 3000 reads in each stage and end to end, cumulative
// buckets ending at the count.
func checkScrape(t *testing.T, text string) {
	t.Helper()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatalf("scrape does not parse: %v\n%s", err, text)
	}
	f := families["dpperf_profile_latency_seconds"]
	if f == nil || f.GetType() != dto.MetricType_HISTOGRAM {
		t.Fatalf("no histogram family in\n%s", text)
	}
	stages := map[string]bool{}
	for _, m := range f.Metric {
		labels := map[string]string{}
		for _, l := range m.Label {
			labels[l.GetName()] = l.GetValue()
		}
		h := m.GetHistogram()
		if labels["path"] != "block" || labels["group"] != "read" || h.GetSampleCount() != 3000 || !(h.GetSampleSum() > 0) {
			t.Errorf("series %v: count %d sum %g", labels, h.GetSampleCount(), h.GetSampleSum())
		}
		stages[labels["stage"]] = true
		prev := uint64(0)
		for _, b := range h.Bucket {
			if b.GetCumulativeCount() < prev || b.GetCumulativeCount() > h.GetSampleCount() {
				t.Errorf("stage %s: bucket le=%g holds %d after %d", labels["stage"], b.GetUpperBound(), b.GetCumulativeCount(), prev)
			}
			prev = b.GetCumulativeCount()
		}
	}
	if !stages["D2C"] || !stages["Q→C"] {
		t.Errorf("stages %v", stages)
	}
}

// Profiles come from files; reading one and comparing it with itself must
// never panic, whatever the file holds.
func FuzzReadProfile(f *testing.F) {
	for _, name := range []string{"block-qd1.json", "block-qd32c.json"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"schema":"dpperf.profile/v1","groups":[{"key":"a","stages":[{"name":"x"}]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ReadProfile(bytes.NewReader(data))
		if err != nil {
			return
		}
		c := analyze.Compare(p, p, "a", "b")
		var buf bytes.Buffer
		if err := CompareText(&buf, c); err != nil {
			t.Fatal(err)
		}
		if err := Text(&buf, p, nil); err != nil {
			t.Fatal(err)
		}
		if err := HTML(&buf, p, c); err != nil {
			t.Fatal(err)
		}
	})
}

// Every report shows what the task's contents ask for and nothing else.
func TestContents(t *testing.T) {
	cases := []struct {
		contents  []string
		want, not []string // in the text report
		jsonNot   []string
	}{
		{[]string{"latency"}, []string{"Q→C", "p99.9"}, []string{"IOPS", "Q2G", "occupancy", "in flight"}, []string{`"stages"`, `"iops"`, `"occupancy"`}},
		{[]string{"throughput"}, []string{"IOPS", "MB/s"}, []string{"Q→C", "Q2G", "in flight"}, []string{`"stages"`, `"latency"`, `"distribution"`}},
		{[]string{"breakdown"}, []string{"Q2G", "share"}, []string{"Q→C", "IOPS", "occupancy"}, []string{`"distribution"`, `"iops"`, `"occupancy"`, `"arrival_rate"`}},
		{[]string{"queue"}, []string{"in flight on average"}, []string{"Q2G", "Q→C", "IOPS"}, []string{`"stages"`, `"mbps"`}},
		{[]string{"breakdown", "queue"}, []string{"Q2G", "occupancy", "in flight"}, []string{"Q→C", "IOPS"}, []string{`"iops"`}},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.contents, ","), func(t *testing.T) {
			pr := profileOf(t, "block-qd1.txt.gz")
			pr.Restrict(c.contents)
			var text, js, html bytes.Buffer
			if err := Text(&text, pr, append(DefaultColumns, "dist")); err != nil {
				t.Fatal(err)
			}
			if err := JSON(&js, pr); err != nil {
				t.Fatal(err)
			}
			if err := HTML(&html, pr, nil); err != nil {
				t.Fatal(err)
			}
			for _, w := range c.want {
				if !strings.Contains(text.String(), w) {
					t.Errorf("text lacks %q:\n%s", w, text.String())
				}
			}
			for _, n := range c.not {
				if strings.Contains(text.String(), n) {
					t.Errorf("text has %q:\n%s", n, text.String())
				}
			}
			for _, n := range c.jsonNot {
				if strings.Contains(js.String(), n) {
					t.Errorf("JSON has %s", n)
				}
			}
			if !strings.Contains(js.String(), `"contents"`) {
				t.Error("JSON does not list its contents")
			}
			if c.contents[0] != "breakdown" && strings.Contains(html.String(), "<table>") {
				t.Error("HTML has a stage table without the breakdown")
			}
			back, err := ReadProfile(&js)
			if err != nil || strings.Join(back.Contents, ",") != strings.Join(c.contents, ",") {
				t.Fatalf("read back contents %v, %v", back.Contents, err)
			}
			if g := back.Groups[0]; (g.Latency.Count != 0) != back.Contents.Has("latency") {
				t.Errorf("end-to-end latency %+v with contents %v", g.Latency, back.Contents)
			}
		})
	}
	// All four parts are the default: the profile does not list them.
	pr := profileOf(t, "block-qd1.txt.gz")
	pr.Restrict([]string{"queue", "latency", "breakdown", "throughput"})
	if pr.Contents != nil || len(pr.Groups[0].Stages) == 0 {
		t.Errorf("all contents: %v", pr.Contents)
	}
}
