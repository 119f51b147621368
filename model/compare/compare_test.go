package compare

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/dpperf/dpperf/model/flow"
	"github.com/dpperf/dpperf/model/sim"
	"github.com/dpperf/dpperf/model/spec"
)

// TestRun: on the echo server the rows are in their order with their
// units, the capacity run is at 1.25 times the model's attainable
// throughput, the offered load is left as it was, and only the checked
// rows can exceed a limit.
func TestRun(t *testing.T) {
	s, err := spec.Load("../../examples/model/echo-accel/spec.yaml")
	if err != nil {
		t.Fatal(err)
	}
	n, err := flow.Compile(s)
	if err != nil {
		t.Fatal(err)
	}
	offered := n.Offered
	c, err := Run(context.Background(), n, sim.Options{Packets: 20000, Warmup: -1, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if n.Offered != offered {
		t.Errorf("offered load %g after Run, was %g", n.Offered, offered)
	}
	if got, want := float64(c.Capacity.Offered), CapacityFactor*float64(c.Model.Throughput); math.Abs(got-want) > 1e-6*want {
		t.Errorf("capacity run at %g, want %g", got, want)
	}
	var names, unitsOf []string
	checked := 0
	for _, r := range c.Rows {
		names, unitsOf = append(names, r.Metric), append(unitsOf, r.Unit)
		if r.Checked {
			checked++
		}
	}
	if strings.Join(names, "|") != "throughput at offered load (B/s)|attainable throughput (B/s)|mean latency (s)|drop share|p99 latency (s)" ||
		strings.Join(unitsOf, "|") != "B/s|B/s|s||s" || checked != 3 {
		t.Errorf("rows %v, units %v, %d checked", names, unitsOf, checked)
	}
	if !math.IsNaN(float64(c.Rows[4].Model)) || !math.IsNaN(float64(c.Rows[4].Error)) {
		t.Errorf("p99 row %+v: the model gives no p99", c.Rows[4])
	}
	// The drop share of so short a run is far off, but it is not checked.
	if e := math.Abs(float64(c.Rows[3].Error)); e <= 0.2 {
		t.Fatalf("drop share within %.1f%%: the test needs a row off by more", 100*e)
	}
	if r, ok := c.Exceeding(20); ok {
		t.Errorf("%s exceeds 20%%: %g", r.Metric, float64(r.Error))
	}
	if _, ok := c.Exceeding(0); !ok {
		t.Error("no checked row differs at all")
	}
	var b bytes.Buffer
	if err := c.WriteText(&b); err != nil || !strings.Contains(b.String(), "attainable throughput (B/s)") {
		t.Errorf("text (%v):\n%s", err, b.String())
	}
	js, err := json.Marshal(c)
	if err != nil || !strings.Contains(string(js), `"schema":"dpperf.model.compare/v1"`) || strings.Contains(string(js), "Checked") {
		t.Errorf("JSON (%v): %.200s", err, js)
	}
}
