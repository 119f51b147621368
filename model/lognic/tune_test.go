package lognic

import (
	"context"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/dpperf/dpperf/model/opt"
	"github.com/dpperf/dpperf/model/spec"
	"github.com/dpperf/dpperf/model/sweep"
)

var tuneCases = []struct {
	p spec.Param
	v float64
}{
	{"offered", 2.5 * GiB}, {"size", 8192}, {"case0.offered", 0.5 * GiB}, {"case0.ssd.parallelism", 4},
	{"case0.ssd.queue", 32}, {"case0.sub.partition", 0.25}, {"case0.cpl.overhead", 3e-6}, {"case0.ssd.throughput", 1.5 * GiB},
}

func TestTuneGetSet(t *testing.T) {
	f, err := Load("testdata/nvmeof.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range tuneCases {
		m := f.Clone()
		if err := m.Set(c.p, c.v); err != nil {
			t.Fatalf("%s: %v", c.p, err)
		}
		if got, err := m.Get(c.p); err != nil || rel(got, c.v) > 1e-12 {
			t.Errorf("%s: got %v, %v; want %v", c.p, got, err, c.v)
		}
		if orig, _ := f.Get(c.p); orig == c.v {
			t.Errorf("%s: the original changed or the case tests nothing", c.p)
		}
	}
	for _, p := range []spec.Param{"case1.ssd.queue", "case0.nope.queue", "case0.ssd.colour", "cores.parallelism"} {
		if _, err := f.Get(p); err == nil {
			t.Errorf("%s accepted", p)
		}
	}
}

// Writing a parameter into the file and parsing it again gives the same
// file as Set; the comments stay.
func TestDocSet(t *testing.T) {
	data, err := os.ReadFile("testdata/nvmeof.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range tuneCases {
		d, err := ReadDoc(data, "nvmeof.yaml")
		if err != nil {
			t.Fatal(err)
		}
		if err := d.Set(c.p, c.v); err != nil {
			t.Fatal(err)
		}
		out, err := d.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(out), "# An NVMe-oF target") {
			t.Errorf("comments lost")
		}
		f, err := Parse(out, "out.yaml")
		if err != nil {
			t.Fatalf("%s: %v\n%s", c.p, err, out)
		}
		if got, _ := f.Get(c.p); rel(got, c.v) > 1e-9 {
			t.Errorf("%s: read back %v, want %v", c.p, got, c.v)
		}
	}
}

// Sweeps and the optimizer run on LogNIC files: the SSD's engines raise
// the throughput until the CPU-SSD link binds.
func TestSweepAndOptimize(t *testing.T) {
	f, err := Load("testdata/nvmeof.yaml")
	if err != nil {
		t.Fatal(err)
	}
	m := f.Clone()
	if err := m.Set("case0.ssd.throughput", 0.5*GiB); err != nil {
		t.Fatal(err)
	}
	r, err := sweep.Run(context.Background(), m, "offered", []float64{0.1 * GiB, 0.2 * GiB, 0.4 * GiB}, sweep.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(r.Points); i++ {
		if r.Points[i].Latency <= r.Points[i-1].Latency {
			t.Errorf("latency does not grow with load: %+v", r.Points)
		}
	}
	p := &opt.Problem{Model: m, Objective: opt.MinLatency, Vars: []opt.Var{{Param: "case0.ssd.parallelism", Lo: 1, Hi: 16, Integer: true}}}
	sol, err := opt.Solve(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	// Brute force over the same grid.
	best, bestL := 0.0, math.Inf(1)
	for d := 1.0; d <= 16; d++ {
		pt, err := p.Evaluate([]float64{d})
		if err != nil {
			t.Fatal(err)
		}
		if pt.Latency < bestL {
			best, bestL = d, pt.Latency
		}
	}
	if sol.Values[0] != best {
		t.Errorf("optimizer chose %v, brute force %v", sol.Values[0], best)
	}
}
