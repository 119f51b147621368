package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dpperf/dpperf/internal/golden"
	"github.com/dpperf/dpperf/model/lognic"

	"github.com/dpperf/dpperf/internal/fail"
)

const echoSpec = "../../examples/model/echo-accel/spec.yaml"

func runCLI(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	err := run(context.Background(), args, &out, &errb)
	return out.String(), errb.String(), err
}

func TestModelEstimateGolden(t *testing.T) {
	out, _, err := runCLI(t, "model", "estimate", echoSpec)
	if err != nil {
		t.Fatal(err)
	}
	golden.CheckString(t, "model/estimate-echo.txt", out)
	out, _, err = runCLI(t, "model", "estimate", "--compat", "lognic", "../../examples/model/lognic-format/nvmeof.yaml")
	if err != nil {
		t.Fatal(err)
	}
	golden.CheckString(t, "model/estimate-lognic-compat.txt", out)
}

// TestModelEstimateLogNICPartial: a LogNIC file whose nodes lack Q_num
// and Q_len still gives throughput and bottleneck; latency is marked
// unavailable with the reason, in text and JSON, and no NaN is printed.
func TestModelEstimateLogNICPartial(t *testing.T) {
	const partial = "../../model/lognic/testdata/nvmeof-partial.yaml"
	out, _, err := runCLI(t, "model", "estimate", "--compat", "lognic", partial)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"throughput            1.5 GiB/s", "bottleneck            BW:CPU-SSD", "latency               unavailable: node sub has no Q_num or Q_len"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	js, _, err := runCLI(t, "model", "estimate", "--compat", "lognic", "--json", partial)
	if err != nil {
		t.Fatal(err)
	}
	var r lognic.CompatReport
	if err := json.Unmarshal([]byte(js), &r); err != nil {
		t.Fatal(err)
	}
	if r.Throughput != 1.5 || r.Bottleneck != "BW:CPU-SSD" || !strings.Contains(r.LatencyUnavailable, "Q_num") || !strings.Contains(js, `"latency_s": null`) {
		t.Errorf("JSON %s", js)
	}
	if strings.Contains(out+js, "NaN") {
		t.Errorf("NaN printed:\n%s\n%s", out, js)
	}
}

func TestModelEstimateJSON(t *testing.T) {
	out, _, err := runCLI(t, "model", "estimate", "--json", echoSpec, "--offered", "25Gbit/s")
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Schema     string   `json:"schema"`
		Throughput float64  `json:"throughput_Bps"`
		Bottleneck string   `json:"bottleneck"`
		Latency    *float64 `json:"latency_s"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if r.Schema != "dpperf.model.estimate/v1" || math.Abs(r.Throughput-1e9) > 1 || r.Bottleneck != "ip:md5" || r.Latency == nil {
		t.Errorf("%+v", r)
	}
}

func TestModelErrors(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(bad, []byte("hardware:\n  ips:\n    - {name: a, throughput: 25}\n"), 0o644)
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"model"}, 2, "no command"},
		{[]string{"model", "frobnicate"}, 2, "unknown command"},
		{[]string{"model", "estimate", bad}, 2, "bad.yaml:3: hardware.ips[0].throughput: \"25\" has no unit"},
		{[]string{"model", "estimate", "/nonexistent.yaml"}, 2, "open spec"},
		{[]string{"model", "estimate", "--format", "xml", echoSpec}, 2, "want text or json"},
		{[]string{"model", "sweep", "--param", "nope", "--values", "1,2", echoSpec}, 2, "unknown parameter"},
		{[]string{"model", "optimize", "--vary", "echo.submit.parallelism=1..15", "--latency-bound", "1us", echoSpec}, 1, "no configuration meets"},
	}
	for _, c := range cases {
		_, _, err := runCLI(t, c.args...)
		if got := fail.ExitCode(err); got != c.code || err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: exit %d err %v; want exit %d containing %q", c.args, got, err, c.code, c.want)
		}
	}
}

func TestModelCompareAndOptimize(t *testing.T) {
	out, _, err := runCLI(t, "model", "compare", "--quiet", "--packets", "100000", "--fail-above", "5", echoSpec)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(out, "attainable throughput") {
		t.Errorf("compare output:\n%s", out)
	}
	out, _, err = runCLI(t, "model", "optimize", "--vary", "echo.submit.parallelism=1..15", "--offered", "25Gbit/s", "--json", echoSpec)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, `"echo.submit.parallelism": 7`) {
		t.Errorf("optimize output:\n%s", out)
	}
}

func TestModelSweepPlot(t *testing.T) {
	png := filepath.Join(t.TempDir(), "p.png")
	out, _, err := runCLI(t, "model", "sweep", "--param", "echo.submit.parallelism", "--values", "1..9", "--offered", "25Gbit/s", "--plot", png, echoSpec)
	if err != nil {
		t.Fatal(err)
	}
	golden.CheckString(t, "model/sweep-echo.txt", out)
	b, err := os.ReadFile(png)
	if err != nil || !bytes.HasPrefix(b, []byte("\x89PNG")) {
		t.Errorf("plot not written: %v", err)
	}
}

func TestModelOptimizeWrite(t *testing.T) {
	out := filepath.Join(t.TempDir(), "best.yaml")
	if _, _, err := runCLI(t, "model", "optimize", "--vary", "echo.submit.parallelism=1..15", "--offered", "25Gbit/s", "--write", out, echoSpec); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# Inline accelerator echo server", "{name: submit, ip: cores, parallelism: 7, overhead: 1us}", "ingress: 25Gbit/s"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("written file lacks %q:\n%s", want, b)
		}
	}
	// The written file is the optimum: estimating it gives the optimizer's figures.
	o1, _, err := runCLI(t, "model", "estimate", out)
	if err != nil {
		t.Fatal(err)
	}
	o2, _, _ := runCLI(t, "model", "estimate", "--offered", "25Gbit/s", "--format", "text", echoSpec)
	if o1 != o2 || !strings.Contains(o1, "8.000Gbit/s") {
		t.Errorf("estimate of the written file:\n%s\nwant:\n%s", o1, o2)
	}
}

func TestModelLogNICSweepOptimize(t *testing.T) {
	const f = "../../examples/model/lognic-format/nvmeof.yaml"
	out, _, err := runCLI(t, "model", "sweep", "--param", "case0.ssd.parallelism", "--values", "1..4", f)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if strings.Count(out, "\n") != 5 {
		t.Errorf("sweep output:\n%s", out)
	}
	w := filepath.Join(t.TempDir(), "best.yaml")
	out, _, err = runCLI(t, "model", "optimize", "--objective", "min-latency", "--vary", "case0.ssd.parallelism=1..16", "--write", w, f)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	b, err := os.ReadFile(w)
	if err != nil || !strings.Contains(string(b), "Q_num: 1,") || !strings.Contains(string(b), "# An NVMe-oF target") {
		t.Errorf("written file (%v):\n%s\noptimizer:\n%s", err, b, out)
	}
}

// The opaque-SSD example: fitting the committed fio run (iodepth 1 to 128
// on a loop device) gives the committed report and fitted specification.
func TestModelFitExample(t *testing.T) {
	const dir = "../../examples/model/opaque-ssd/"
	w := filepath.Join(t.TempDir(), "fitted.yaml")
	out, _, err := runCLI(t, "model", "fit", "--curve", dir+"fio.json", "--vertex", "read.ssd", "--write", w, dir+"spec.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want, _ := os.ReadFile(dir + "fit.txt")
	if out != string(want) {
		t.Errorf("report differs from %sfit.txt:\n%s", dir, out)
	}
	got, _ := os.ReadFile(w)
	want, _ = os.ReadFile(dir + "fitted.yaml")
	if string(got) != string(want) {
		t.Errorf("fitted specification differs from %sfitted.yaml:\n%s", dir, got)
	}
}

func TestModelFitErrors(t *testing.T) {
	csv := filepath.Join(t.TempDir(), "c.csv")
	os.WriteFile(csv, []byte("load,latency\n1GB/s,10\n"), 0o644)
	const ssd = "../../examples/model/opaque-ssd/spec.yaml"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--vertex", "read.ssd", ssd}, "--curve is required"},
		{[]string{"--curve", csv, "--vertex", "read.ssd", "--size", "4KiB", ssd}, "c.csv:2: latency"},
		{[]string{"--curve", csv, "read.ssd", ssd}, "want one specification file"},
		{[]string{"--curve", csv, "--vertex", "read.nope", ssd}, "no vertex"},
		{[]string{"--curve", csv, "--ip", "cores", ssd}, "reserves part of IP cores"},
		{[]string{"--curve", csv, "--vertex", "read.ssd", "../../examples/model/lognic-format/nvmeof.yaml"}, "LogNIC format"},
	} {
		_, _, err := runCLI(t, append([]string{"model", "fit"}, c.args...)...)
		if fail.ExitCode(err) != 2 || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want exit 2 and %q", c.args, err, c.want)
		}
	}
}

// TestSimulateNoProgressInLogs: progress is for a terminal; with stderr a
// pipe or a file (here a buffer) simulate and compare write none.
func TestSimulateNoProgressInLogs(t *testing.T) {
	for _, args := range [][]string{
		{"model", "simulate", "--packets", "2000", echoSpec},
		{"model", "compare", "--packets", "2000", echoSpec},
	} {
		_, errs, err := runCLI(t, args...)
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		if strings.Contains(errs, "packets") || strings.Contains(errs, "\r") {
			t.Errorf("%v wrote progress into a log: %q", args, errs)
		}
	}
}
