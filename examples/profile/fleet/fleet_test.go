package fleet

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"go.yaml.in/yaml/v3"

	"github.com/dpperf/dpperf/profile/analyze"
	"github.com/dpperf/dpperf/profile/path"
	"github.com/dpperf/dpperf/profile/report"
	"github.com/dpperf/dpperf/profile/tracetext"
)

// exported scrapes a live metrics endpoint with records in it and
// returns the series names (a histogram's _bucket, _sum and _count) and
// label names it serves.
func exported(t *testing.T) (names, labels map[string]bool) {
	t.Helper()
	p, _ := path.Builtin("block")
	src := tracetext.OpenFiles([]string{"../../../profile/testdata/block-qd1.txt.gz"}, p)
	defer src.Close()
	a, _, err := analyze.Run(context.Background(), src, analyze.Options{Path: p, GroupBy: analyze.GroupBy{Type: true, Size: true}})
	if err != nil {
		t.Fatal(err)
	}
	m := report.NewMetrics(p, analyze.GroupBy{Type: true, Size: true})
	m.Sample = 10
	m.Add(a)
	rec := httptest.NewRecorder()
	m.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	body := rec.Body.String()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	// Prometheus adds these to every scraped series.
	names, labels = map[string]bool{"up": true}, map[string]bool{"instance": true, "job": true}
	for name, f := range families {
		if f.GetType() == dto.MetricType_HISTOGRAM {
			names[name+"_bucket"], names[name+"_sum"], names[name+"_count"] = true, true, true
			labels["le"] = true
		} else {
			names[name] = true
		}
		for _, m := range f.Metric {
			for _, l := range m.Label {
				labels[l.GetName()] = true
			}
		}
	}
	return names, labels
}

type rulesFile struct {
	Groups []struct {
		Name  string `yaml:"name"`
		Rules []struct {
			Record string `yaml:"record"`
			Expr   string `yaml:"expr"`
		} `yaml:"rules"`
	} `yaml:"groups"`
}

func readRules(t *testing.T) (recorded []string, exprs map[string]string) {
	t.Helper()
	b, err := os.ReadFile("rules.yml")
	if err != nil {
		t.Fatal(err)
	}
	var rf rulesFile
	if err := yaml.Unmarshal(b, &rf); err != nil {
		t.Fatalf("rules.yml: %v", err)
	}
	exprs = map[string]string{}
	for _, g := range rf.Groups {
		for _, r := range g.Rules {
			if r.Record == "" || r.Expr == "" {
				t.Errorf("rules.yml: group %s: a rule without record or expr", g.Name)
			}
			recorded = append(recorded, r.Record)
			exprs[r.Record] = r.Expr
		}
	}
	if len(recorded) == 0 {
		t.Fatal("rules.yml: no rules")
	}
	return recorded, exprs
}

// dashboardExprs returns every PromQL expression of the dashboard: the
// panels' targets and the template variables' queries.
func dashboardExprs(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("grafana-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Title  string `json:"title"`
		UID    string `json:"uid"`
		Panels []struct {
			ID      int    `json:"id"`
			Type    string `json:"type"`
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Name       string `json:"name"`
				Definition string `json:"definition"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("grafana-dashboard.json: %v", err)
	}
	if d.Title == "" || d.UID == "" || len(d.Panels) == 0 {
		t.Fatal("grafana-dashboard.json: no title, uid or panels")
	}
	var exprs []string
	ids := map[int]bool{}
	for _, p := range d.Panels {
		if ids[p.ID] {
			t.Errorf("panel id %d twice", p.ID)
		}
		ids[p.ID] = true
		if p.Type != "row" && len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			exprs = append(exprs, tg.Expr)
		}
	}
	for _, v := range d.Templating.List {
		exprs = append(exprs, v.Definition)
	}
	return exprs
}

var (
	identRE   = regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*`)
	groupRE   = regexp.MustCompile(`\b(?:by|on|without|ignoring)\s*\(([^)]*)\)`)
	matcherRE = regexp.MustCompile(`\{([^{}]*)\}`)
	labelRE   = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)`)
	stringRE  = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
)

// checkExpr reports the series and label names expr uses that are
// neither exported nor recorded.
func checkExpr(t *testing.T, where, expr string, names, labels map[string]bool) {
	t.Helper()
	// Label names in matchers, before the strings go.
	for _, m := range matcherRE.FindAllStringSubmatch(expr, -1) {
		for _, l := range labelRE.FindAllStringSubmatch(m[1], -1) {
			if !labels[l[1]] {
				t.Errorf("%s: label %q is not exported: %s", where, l[1], expr)
			}
		}
	}
	bare := stringRE.ReplaceAllString(expr, `""`)
	for _, g := range groupRE.FindAllStringSubmatch(bare, -1) {
		for _, l := range strings.Split(g[1], ",") {
			if l = strings.TrimSpace(l); l != "" && !labels[l] {
				t.Errorf("%s: label %q is not exported: %s", where, l, expr)
			}
		}
	}
	for _, id := range identRE.FindAllString(bare, -1) {
		if strings.Contains(id, "dpperf_") && !names[id] {
			t.Errorf("%s: %q is neither exported by the collector nor recorded: %s", where, id, expr)
		}
	}
}

func TestRulesAndDashboardNameExportedSeries(t *testing.T) {
	names, labels := exported(t)
	for _, want := range []string{"dpperf_profile_latency_seconds_bucket", "dpperf_profile_sample_ratio"} {
		if !names[want] {
			t.Fatalf("the collector does not export %s (have %v)", want, names)
		}
	}
	recorded, exprs := readRules(t)
	for _, r := range recorded {
		checkExpr(t, "rules.yml: "+r, exprs[r], names, labels)
	}
	all := map[string]bool{}
	for n := range names {
		all[n] = true
	}
	for _, r := range recorded {
		all[r] = true
	}
	dash := dashboardExprs(t)
	for _, e := range dash {
		checkExpr(t, "grafana-dashboard.json", e, all, labels)
	}
	// Every recorded series is on the dashboard.
	joined := strings.Join(dash, "\n")
	for _, r := range recorded {
		if !strings.Contains(joined, r) {
			t.Errorf("recording rule %s is on no panel of the dashboard", r)
		}
	}
	sort.Strings(recorded)
	t.Logf("recorded: %v", recorded)
}

// TestPromtool checks the configuration and runs the rules' unit tests
// with Prometheus' own tool, where it is installed (scripts/setup.sh
// installs Debian's prometheus package).
func TestPromtool(t *testing.T) {
	if _, err := exec.LookPath("promtool"); err != nil {
		t.Skip("promtool not installed")
	}
	for _, args := range [][]string{
		{"check", "config", "prometheus.yml"},
		{"check", "rules", "rules.yml"},
		{"test", "rules", "rules_test.yml"},
	} {
		out, err := exec.Command("promtool", args...).CombinedOutput()
		if err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}
