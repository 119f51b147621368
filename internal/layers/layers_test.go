package layers

import (
	"os/exec"
	"strings"
	"testing"
)

// TestModuleKeepsTheLayers checks the rules against the module as it is.
func TestModuleKeepsTheLayers(t *testing.T) {
	graph := goList(t, "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}")
	if len(graph) < len(Of)/2 {
		t.Fatalf("go list gave %d packages; the table names %d", len(graph), len(Of))
	}
	for _, msg := range Check("github.com/dpperf/dpperf", graph) {
		t.Error(msg)
	}
	for pkg := range Of {
		if _, ok := graph["github.com/dpperf/dpperf/"+pkg]; !ok {
			t.Errorf("%s is in the table but not in the module (remove it from layers.Of)", pkg)
		}
	}
}

// goList runs go list over the module with format, which must print a
// key and its values on one line, and returns them by key.
func goList(t *testing.T, format string) map[string][]string {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", format, "github.com/dpperf/dpperf/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	m := map[string][]string{}
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		m[f[0]] = f[1:]
	}
	return m
}

// TestCheckFindsBreaks feeds Check graphs with one break each.
func TestCheckFindsBreaks(t *testing.T) {
	const m = "example.org/m"
	for _, c := range []struct {
		name  string
		graph map[string][]string
		want  string
	}{
		{"analysis imports kernel", map[string][]string{m + "/bound": {m + "/testrun"}}, "bound (analysis) imports testrun (kernel)"},
		{"base imports analysis", map[string][]string{m + "/bpfprog": {m + "/cfg"}}, "bpfprog (base) imports cfg (analysis)"},
		{"code imports a test helper", map[string][]string{m + "/calibrate": {m + "/interp/interptest"}}, "calibrate (kernel) imports interp/interptest (testing)"},
		{"cli imports an example", map[string][]string{m + "/cmd/dpperf": {m + "/examples/interface/report"}}, "cmd/dpperf (cli) imports examples/interface/report (example)"},
		{"collector imports analysis", map[string][]string{m + "/profile/collect": {m + "/profile/analyze"}}, "profile/collect imports profile/analyze"},
		{"analysis attaches", map[string][]string{m + "/symex": {"github.com/cilium/ebpf/link"}}, "symex (analysis) imports github.com/cilium/ebpf/link"},
		{"unknown package", map[string][]string{m + "/newthing": nil}, "newthing: package in no layer"},
	} {
		bad := Check(m, c.graph)
		if len(bad) == 0 || !strings.Contains(strings.Join(bad, "\n"), c.want) {
			t.Errorf("%s: Check = %q, want a line with %q", c.name, bad, c.want)
		}
	}
	if bad := Check(m, map[string][]string{m + "/bound": {m + "/cfg", m + "/bpfprog", "fmt"}}); bad != nil {
		t.Errorf("a lawful graph: Check = %q", bad)
	}
}
