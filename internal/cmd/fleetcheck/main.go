// Command fleetcheck is the Prometheus side of the fleet end-to-end run
// (scripts/e2e/profile-fleet.sh): it finds free ports, waits for
// Prometheus' targets to be up, and holds each host's per-stage p99 as
// Prometheus computes it from the scraped histograms against that
// collector's own JSON report.
//
// Usage:
//
//	fleetcheck freeport
//	fleetcheck wait-up -prom URL -n 2 [-query EXPR] [-timeout 60s]
//	fleetcheck compare -prom URL -at UNIXTIME -window 30s INSTANCE=REPORT.json...
//
// wait-up waits until EXPR (default up) gives at least n series of value
// 1 or more: the targets up, or, with
// -query 'max by (instance) (dpperf_profile_latency_seconds_count)', the
// hosts whose latency series Prometheus has scraped.
//
// compare asks Prometheus' HTTP API, at UNIXTIME, for
//
//	histogram_quantile(0.99, sum by (le, group, stage) (rate(dpperf_profile_latency_seconds_bucket{instance="I"}[WINDOW])))
//
// (and the same over the cumulative buckets, and the recording rule's
// series), finds the bucket bounds in the `le` labels and fails (exit 1)
// unless every stage of every group of the report has a p99 from
// Prometheus within one bucket of the report's: in the same bucket or a
// neighbouring one. It also holds Prometheus' count of all requests (the
// recorded ones divided by dpperf_profile_sample_ratio) against the
// report's.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/dpperf/dpperf/profile/analyze"
	"github.com/dpperf/dpperf/profile/report"
)

const bucketMetric = "dpperf_profile_latency_seconds_bucket"

var errFailed = errors.New("the reports and Prometheus disagree")

func main() {
	err := run(os.Args[1:], os.Stdout, os.Stderr)
	switch {
	case err == nil:
	case errors.Is(err, errFailed):
		fmt.Fprintln(os.Stderr, "fleetcheck:", err)
		os.Exit(1)
	default:
		fmt.Fprintln(os.Stderr, "fleetcheck:", err)
		os.Exit(2)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return errors.New("usage: fleetcheck freeport | wait-up | compare (see the package comment)")
	}
	switch args[0] {
	case "freeport":
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		defer ln.Close()
		fmt.Fprintln(stdout, ln.Addr().(*net.TCPAddr).Port)
		return nil
	case "wait-up":
		fs := flag.NewFlagSet("wait-up", flag.ContinueOnError)
		prom := fs.String("prom", "", "Prometheus base URL")
		n := fs.Int("n", 1, "series that must be 1 or more")
		query := fs.String("query", "up", "expression to wait for")
		timeout := fs.Duration("timeout", 60*time.Second, "give up after")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		return waitUp(&client{base: *prom}, *query, *n, *timeout, stderr)
	case "compare":
		fs := flag.NewFlagSet("compare", flag.ContinueOnError)
		prom := fs.String("prom", "", "Prometheus base URL")
		at := fs.Float64("at", 0, "evaluation time (Unix seconds)")
		window := fs.Duration("window", 0, "range of the rate: the run up to -at")
		q := fs.Float64("q", 0.99, "quantile")
		rule := fs.String("rule", "instance_path_group_stage:dpperf_profile_latency_seconds:p99_1m", "recorded p99 series to check too (empty: none)")
		tol := fs.Float64("count-tolerance", 0.25, "largest relative difference of the request counts")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		if *at == 0 || *window <= 0 || fs.NArg() == 0 {
			return errors.New("compare needs -at, -window and INSTANCE=REPORT.json arguments")
		}
		hosts := map[string]*analyze.Profile{}
		var names []string
		for _, a := range fs.Args() {
			inst, file, ok := strings.Cut(a, "=")
			if !ok {
				return fmt.Errorf("%q: want INSTANCE=REPORT.json", a)
			}
			f, err := os.Open(file)
			if err != nil {
				return err
			}
			p, err := report.ReadProfile(f)
			f.Close()
			if err != nil {
				return fmt.Errorf("%s: %w", file, err)
			}
			hosts[inst] = p
			names = append(names, inst)
		}
		c := &client{base: *prom, at: *at}
		return compare(c, names, hosts, *window, *q, *rule, *tol, stdout)
	}
	return fmt.Errorf("unknown command %q", args[0])
}

// client queries Prometheus' HTTP API (instant queries).
type client struct {
	base string
	at   float64 // evaluation time; 0: now
}

// sample is one element of an instant vector.
type sample struct {
	Labels map[string]string
	Value  float64
}

func (c *client) query(expr string) ([]sample, error) {
	v := url.Values{"query": {expr}}
	if c.at != 0 {
		v.Set("time", strconv.FormatFloat(c.at, 'f', 3, 64))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(c.base, "/")+"/api/v1/query?"+v.Encode(), nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var body struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			ResultType string `json:"resultType"`
			Result     []struct {
				Metric map[string]string `json:"metric"`
				Value  [2]any            `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil, fmt.Errorf("query %s: %w", expr, err)
	}
	if body.Status != "success" {
		return nil, fmt.Errorf("query %s: %s", expr, body.Error)
	}
	if body.Data.ResultType != "vector" {
		return nil, fmt.Errorf("query %s: result type %s, want vector", expr, body.Data.ResultType)
	}
	var out []sample
	for _, r := range body.Data.Result {
		s, _ := r.Value[1].(string)
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("query %s: value %q", expr, s)
		}
		out = append(out, sample{r.Metric, f})
	}
	return out, nil
}

// waitUp polls query until n of its series are 1 or more.
func waitUp(c *client, query string, n int, timeout time.Duration, log io.Writer) error {
	deadline := time.Now().Add(timeout)
	for {
		res, err := c.query(query)
		up := 0
		for _, s := range res {
			if s.Value >= 1 {
				up++
			}
		}
		if err == nil && up >= n {
			fmt.Fprintf(log, "fleetcheck: %d series of %s at 1 or more\n", up, query)
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("after %v: %d of %d series of %s at 1 or more (%v)", timeout, up, n, query, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// bucketIndex is the index of the bucket holding v: the first bound ≥ v
// (bounds increasing, the last +Inf). Prometheus' buckets are closed
// above (le), and a value a hair above a bound through float rounding
// still counts as at it.
func bucketIndex(bounds []float64, v float64) int {
	return sort.Search(len(bounds), func(i int) bool { return bounds[i] >= v*(1-1e-9) })
}

// withinOneBucket says whether a and b fall in the same or neighbouring
// buckets.
func withinOneBucket(bounds []float64, a, b float64) bool {
	d := bucketIndex(bounds, a) - bucketIndex(bounds, b)
	return d >= -1 && d <= 1
}

// bucketRange names v's bucket as (lower, upper].
func bucketRange(bounds []float64, v float64) string {
	i := bucketIndex(bounds, v)
	lo := 0.0
	if i > 0 {
		lo = bounds[i-1]
	}
	if i >= len(bounds) {
		return "beyond +Inf"
	}
	return fmt.Sprintf("(%s, %s]", fmtSec(lo), fmtSec(bounds[i]))
}

func fmtSec(s float64) string {
	switch {
	case math.IsInf(s, 1):
		return "+Inf"
	case math.IsNaN(s):
		return "NaN"
	case s == 0:
		return "0"
	case s < 1e-3:
		return strconv.FormatFloat(s*1e6, 'g', 4, 64) + "µs"
	case s < 1:
		return strconv.FormatFloat(s*1e3, 'g', 4, 64) + "ms"
	}
	return strconv.FormatFloat(s, 'g', 4, 64) + "s"
}

// namedDist is a report's latency distribution under its stage label.
type namedDist struct {
	name string
	d    analyze.Dist
}

// key names one series of p99s: a group and a stage.
type key struct{ group, stage string }

func byGroupStage(res []sample) map[key]float64 {
	out := map[key]float64{}
	for _, s := range res {
		out[key{s.Labels["group"], s.Labels["stage"]}] = s.Value
	}
	return out
}

// compare checks every host; it prints one line per stage and returns
// errFailed when a p99 or a count disagrees.
func compare(c *client, names []string, hosts map[string]*analyze.Profile, window time.Duration, q float64, rule string, tol float64, out io.Writer) error {
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "instance\tgroup\tstage\tJSON p%g\tbucket (JSON)\tprom rate[%v]\tprom cumulative\tprom rule\tverdict\t\n", 100*q, window)
	var bad, notes []string
	for _, inst := range names {
		prof := hosts[inst]
		sel := fmt.Sprintf(`%s{instance=%q}`, bucketMetric, inst)
		les, err := c.query(fmt.Sprintf(`count by (le) (%s)`, sel))
		if err != nil {
			return err
		}
		var bounds []float64
		for _, s := range les {
			b, err := strconv.ParseFloat(s.Labels["le"], 64)
			if err != nil {
				return fmt.Errorf("instance %s: le=%q", inst, s.Labels["le"])
			}
			bounds = append(bounds, b)
		}
		sort.Float64s(bounds)
		if len(bounds) < 2 || !math.IsInf(bounds[len(bounds)-1], 1) {
			return fmt.Errorf("instance %s: no latency buckets in Prometheus (bounds %v)", inst, bounds)
		}
		// The rate over WINDOW, evaluated at the end of the run: the
		// whole run as scraped (see the script for why).
		rated, err := c.query(fmt.Sprintf(`histogram_quantile(%g, sum by (le, group, stage) (rate(%s[%ds])))`, q, sel, int(window.Seconds())))
		if err != nil {
			return err
		}
		// The cumulative buckets at the same time: the run up to its
		// last scrape, without rate's extrapolation.
		cum, err := c.query(fmt.Sprintf(`histogram_quantile(%g, sum by (le, group, stage) (%s))`, q, sel))
		if err != nil {
			return err
		}
		ruled := map[key]float64{}
		if rule != "" {
			res, err := c.query(fmt.Sprintf(`%s{instance=%q}`, rule, inst))
			if err != nil {
				return err
			}
			ruled = byGroupStage(res)
		}
		rm, cm := byGroupStage(rated), byGroupStage(cum)
		for _, g := range prof.Groups {
			// The report's stages, then the whole request: the stage
			// label with an arrow (Q→C).
			var stages []namedDist
			for _, st := range g.Stages {
				stages = append(stages, namedDist{st.Name, st.Latency})
			}
			for k := range rm {
				if k.group == g.Key && strings.Contains(k.stage, "→") {
					stages = append(stages, namedDist{k.stage, g.Latency})
				}
			}
			for _, st := range stages {
				if st.d.Count == 0 {
					continue
				}
				jns := st.d.P(100 * q)
				if jns < 0 {
					return fmt.Errorf("instance %s: the report has no p%g", inst, 100*q)
				}
				js := float64(jns) / 1e9
				k := key{g.Key, st.name}
				r, rok := rm[k]
				cv, cok := cm[k]
				rv, rlok := ruled[k]
				verdict := "ok"
				switch {
				case !rok || math.IsNaN(r):
					verdict = "no rate p99 in Prometheus"
				case !withinOneBucket(bounds, r, js):
					verdict = "rate p99 more than one bucket away"
				case !cok || !withinOneBucket(bounds, cv, js):
					verdict = "cumulative p99 more than one bucket away"
				case rule != "" && (!rlok || !withinOneBucket(bounds, rv, js)):
					verdict = "recorded p99 missing or more than one bucket away"
				}
				if verdict != "ok" {
					bad = append(bad, fmt.Sprintf("%s %s %s: %s", inst, g.Key, st.name, verdict))
				}
				rs := "-"
				if rlok {
					rs = fmtSec(rv)
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", inst, g.Key, st.name, fmtSec(js), bucketRange(bounds, js), fmtSec(r), fmtSec(cv), rs, verdict)
			}
		}
		var bs []string
		for _, b := range bounds {
			bs = append(bs, fmtSec(b))
		}
		notes = append(notes, fmt.Sprintf("%s: buckets (le): %s", inst, strings.Join(bs, " ")))

		// All requests: the recorded ones at the last scrape divided by
		// the sample ratio, against the report's IOPS × window (its
		// requests scaled by the sampling). The interval still open at
		// the last scrape is missing from Prometheus' count.
		res, err := c.query(fmt.Sprintf(`sum(dpperf_profile_latency_seconds_count{instance=%q, stage=~".+→.+"}) / scalar(dpperf_profile_sample_ratio{instance=%q})`, inst, inst))
		if err != nil {
			return err
		}
		var jsonAll float64
		for _, g := range prof.Groups {
			jsonAll += g.IOPS * prof.Window.Seconds
		}
		if len(res) != 1 || jsonAll == 0 || math.Abs(res[0].Value-jsonAll) > tol*jsonAll {
			got := math.NaN()
			if len(res) == 1 {
				got = res[0].Value
			}
			bad = append(bad, fmt.Sprintf("%s: requests: Prometheus %.0f, report %.0f (sample 1/%d)", inst, got, jsonAll, prof.Sample))
		} else {
			notes = append(notes, fmt.Sprintf("%s: requests: Prometheus %.0f, report %.0f (sample 1/%d)", inst, res[0].Value, jsonAll, prof.Sample))
		}
	}
	w.Flush()
	for _, n := range notes {
		fmt.Fprintln(out, n)
	}
	if len(bad) > 0 {
		for _, b := range bad {
			fmt.Fprintln(out, "FAIL", b)
		}
		return errFailed
	}
	return nil
}
