package flow

import (
	"strings"
	"testing"

	"github.com/dpperf/dpperf/model/spec"
)

// TestSetAll: settings apply in order with their units; a setting
// without '=' or of an unknown parameter is an error naming it.
func TestSetAll(t *testing.T) {
	s, err := spec.Load("../../examples/model/echo-accel/spec.yaml")
	if err != nil {
		t.Fatal(err)
	}
	m := FromSpec(s)
	changed, err := SetAll(m, []string{"offered=10Gbit/s", "offered=25Gbit/s", "echo.submit.parallelism=3"})
	if err != nil {
		t.Fatal(err)
	}
	if len(changed) != 3 || changed[2] != "echo.submit.parallelism" {
		t.Errorf("changed %v", changed)
	}
	if v, _ := m.Get("offered"); v != 25e9/8 {
		t.Errorf("offered %g B/s, want the last setting", v)
	}
	if v, _ := m.Get("echo.submit.parallelism"); v != 3 {
		t.Errorf("parallelism %g", v)
	}
	for kv, want := range map[string]string{"size": `"size": want PARAM=VALUE`, "nope=1": "nope: ", "size=64": "size: "} {
		if _, err := SetAll(m, []string{kv}); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: %v, want %q", kv, err, want)
		}
	}
}
