package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dpperf/dpperf/internal/golden"

	"github.com/dpperf/dpperf/internal/fail"
	"github.com/dpperf/dpperf/model/fit"
	"github.com/dpperf/dpperf/model/opt"
	"github.com/dpperf/dpperf/model/spec"
)

const countminSpec = "../../examples/model/xdp-countmin/spec.yaml"

// TestModelProgramStage: the countmin stage takes 1.135 µs per packet per
// core from its bound, and 11 of the NIC's 50 cores carry 25 Gbit/s of
// the example's IMIX within 20 µs and 0.1% drops.
func TestModelProgramStage(t *testing.T) {
	out, _, err := runCLI(t, "model", "estimate", countminSpec)
	if err != nil {
		t.Fatal(err)
	}
	golden.CheckString(t, "model/estimate-countmin.txt", out)
	out, _, err = runCLI(t, "model", "optimize", "--objective", "min-resources", "--vary", "xdp.count.parallelism=1..50",
		"--latency-bound", "20us", "--max-drop", "0.001", "--json", countminSpec)
	if err != nil {
		t.Fatal(err)
	}
	var r opt.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if !r.Feasible || r.Values["xdp.count.parallelism"] != 11 {
		t.Errorf("cores %v (feasible %v), want 11", r.Values["xdp.count.parallelism"], r.Feasible)
	}
}

// TestModelFitProfile: fitted on the iodepth-32 profile with two device
// engines, the block path predicts the iodepth-1 latency.
func TestModelFitProfile(t *testing.T) {
	out, _, err := runCLI(t, "model", "fit", "--profile", "../../examples/profile/base-qd32.json", "--parallelism", "2",
		"--check", "../../examples/profile/base-qd1.json")
	if err != nil {
		t.Fatal(err)
	}
	golden.CheckString(t, "model/fit-profile-qd32-qd1.txt", out)
	w := filepath.Join(t.TempDir(), "fitted.yaml")
	out, _, err = runCLI(t, "model", "fit", "--profile", "../../examples/profile/base-qd1.json,../../examples/profile/base-qd32.json",
		"--json", "--write", w)
	if err != nil {
		t.Fatal(err)
	}
	var r fit.PathReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Stages) != 3 || r.Stages[2].Name != "D2C" || r.Stages[2].Parallelism != 2 {
		t.Errorf("stages %+v", r.Stages)
	}
	s, err := spec.Load(w)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Graphs[0].Vertices) != 3 {
		t.Errorf("written spec has %d vertices", len(s.Graphs[0].Vertices))
	}
	if _, _, err := runCLI(t, "model", "estimate", w); err != nil {
		t.Error(err)
	}
}

// TestModelFitProfileEngines: from one NVMe/TCP profile at iodepth 8
// the device stage gets null_blk's four engines by default (Little's
// law), and the model predicts the iodepth-1 profile.
func TestModelFitProfileEngines(t *testing.T) {
	const dir = "../../examples/model/profile-nvme-tcp/"
	out, _, err := runCLI(t, "model", "fit", "--profile", dir+"qd8.json", "--check", dir+"qd1-again.json", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var r fit.PathReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Stages) != 6 || r.Stages[3].Name != "target-device" || r.Stages[3].Parallelism != 4 || r.Stages[2].Parallelism != 1 {
		t.Fatalf("stages %+v", r.Stages)
	}
	if f := r.Stages[3].Fitted; len(f) != 2 || f[1] != fit.EstimatedParallelism {
		t.Errorf("fitted %v", f)
	}
	if r.Check == nil || len(r.Check.Rows) != 7 {
		t.Fatalf("check %+v", r.Check)
	}
	out, _, err = runCLI(t, "model", "fit", "--profile", dir+"qd8.json", "--check", dir+"qd1-again.json")
	if err != nil {
		t.Fatal(err)
	}
	golden.CheckString(t, "model/fit-profile-nvme-tcp-qd8.txt", out)
}

func TestModelFlowErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	writeFileAtomic(bad, []byte(`hardware: {ips: [{name: c, parallelism: 4}]}
software: {graphs: [{name: g, vertices: [{name: v, ip: c, program: {bound: none.json}}], edges: [{from: ingress, to: v}, {from: v, to: egress}]}]}
traffic: {ingress: 1Gbit/s, size: 64B}
`))
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"model", "estimate", bad}, "vertices[0].program: bound: read"},
		{[]string{"model", "fit", "--profile", "../../examples/profile/compare.json"}, "schema"},
		{[]string{"model", "fit", "--profile", "none.json"}, "none.json"},
		{[]string{"model", "fit", "--profile", "../../examples/profile/base-qd1.json", countminSpec}, "no --curve and no spec.yaml"},
		{[]string{"model", "fit", "--profile", "../../examples/profile/base-qd1.json", "--parallelism", "0"}, "parallelism"},
		{[]string{"model", "fit", "--profile", "../../examples/profile/base-qd1.json", "--parallelism", "some"}, "want auto or a whole number"},
		{[]string{"model", "estimate", "--deploy", "x.pcap", echoSpec}, "no vertex"},
	} {
		_, _, err := runCLI(t, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) || fail.ExitCode(err) != 2 {
			t.Errorf("%v: got %v (exit %d), want %q and exit 2", c.args, err, fail.ExitCode(err), c.want)
		}
	}
}

// TestOptimizeAsksForItsConstraint: min-resources with nothing to meet is
// a usage error naming the constraints; the README's constraint gives 11.
func TestOptimizeAsksForItsConstraint(t *testing.T) {
	_, errs, code := dpperf(t, "model", "optimize", "--objective", "min-resources", "--vary", "xdp.count.parallelism=1..50", countminSpec)
	if code != 2 || !strings.Contains(errs, "--min-throughput, --max-drop or --latency-bound") {
		t.Fatalf("exit %d: %s", code, errs)
	}
	out, errs, code := dpperf(t, "model", "optimize", "--objective", "min-resources", "--min-throughput", "25Gbit/s",
		"--vary", "xdp.count.parallelism=1..50", "--json", countminSpec)
	var r opt.Report
	if code != 0 || json.Unmarshal([]byte(out), &r) != nil || !r.Feasible || r.Values["xdp.count.parallelism"] != 11 {
		t.Fatalf("exit %d, %+v: %s", code, r, errs)
	}
}
