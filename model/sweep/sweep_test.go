package sweep

import (
	"bytes"
	"context"
	"math"
	"testing"

	"github.com/dpperf/dpperf/model/flow"
	"github.com/dpperf/dpperf/model/spec"
)

func TestValues(t *testing.T) {
	cases := []struct {
		p    spec.Param
		in   string
		want []float64
	}{
		{"g.v.parallelism", "1..4", []float64{1, 2, 3, 4}},
		{"g.v.partition", "0.2,0.5", []float64{0.2, 0.5}},
		{"offered", "1Gbit/s..3Gbit/s:3", []float64{0.125e9, 0.25e9, 0.375e9}},
		{"size", "64B,1500B", []float64{64, 1500}},
	}
	for _, c := range cases {
		got, err := Values(c.p, c.in)
		if err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		if len(got) != len(c.want) {
			t.Errorf("%s: %v", c.in, got)
			continue
		}
		for i := range got {
			if math.Abs(got[i]-c.want[i]) > 1e-9*c.want[i] {
				t.Errorf("%s: %v, want %v", c.in, got, c.want)
			}
		}
	}
	for _, bad := range []string{"3..1", "1Gbit/s..2Gbit/s", "x", "1..2:1"} {
		p := spec.Param("offered")
		if bad == "3..1" {
			p = "g.v.parallelism"
		}
		if _, err := Values(p, bad); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

// Throughput against parallelism rises by one core's rate per core until
// the accelerator binds (case study 1).
func TestParallelismSweep(t *testing.T) {
	s, err := spec.Load("../../examples/model/echo-accel/spec.yaml")
	if err != nil {
		t.Fatal(err)
	}
	vals, _ := Values("echo.submit.parallelism", "1..8")
	r, err := Run(context.Background(), flow.FromSpec(s), "echo.submit.parallelism", vals, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range r.Points {
		want := math.Min(float64(i+1)*1.2e9/8, 1e9)
		if math.Abs(float64(p.Throughput)-want) > 1e-6*want {
			t.Errorf("d=%d: %v, want %v", i+1, float64(p.Throughput), want)
		}
	}
	if r.Points[6].Bottleneck != "ip:md5" || r.Points[5].Bottleneck != "ip:cores/echo.submit" {
		t.Errorf("bottlenecks %q %q", r.Points[5].Bottleneck, r.Points[6].Bottleneck)
	}
	var png, svg bytes.Buffer
	if err := r.Plot(&png, "x.png", "throughput"); err != nil || !bytes.HasPrefix(png.Bytes(), []byte("\x89PNG")) {
		t.Errorf("png: %v", err)
	}
	if err := r.Plot(&svg, "x.svg", "throughput"); err != nil || !bytes.Contains(svg.Bytes(), []byte("<svg")) {
		t.Errorf("svg: %v", err)
	}
}
