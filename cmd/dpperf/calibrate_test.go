package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dpperf/dpperf/bound"
	"github.com/dpperf/dpperf/calibrate"
	"github.com/dpperf/dpperf/internal/testobj"
	"github.com/dpperf/dpperf/target"
)

// TestTargetsCalibrate calibrates this host quickly, checks the file, and
// bounds every libxdp1 program under it.
func TestTargetsCalibrate(t *testing.T) {
	dir := t.TempDir()
	host := filepath.Join(dir, "host.yaml")
	out, errs, code := dpperf(t, "targets", "calibrate", "--quick", "--write", host)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "per_packet") || !strings.Contains(out, "helpers.map_lookup_elem.hash") ||
		!strings.Contains(out, "pcv.lru_hash.traversals") || !strings.Contains(out, "pcv.lpm_trie.stages") {
		t.Errorf("table:\n%s", out)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".host.yaml.*")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
	tg, err := target.Load(host)
	if err != nil {
		t.Fatal(err)
	}
	c := tg.Calibration
	if tg.Name != "x86-64-host" || c == nil || c.Runs != 3 || c.Percentile != 90 || c.Kernel == "" {
		t.Fatalf("target %s, calibration %+v", tg.Name, c)
	}
	if tg.PerPacket[0] <= 0 {
		t.Errorf("per_packet %g", tg.PerPacket[0])
	}
	for cls, v := range tg.Classes {
		// The main program's exit is in per_packet, which times a
		// program that exits; every other class costs something.
		if (cls == "exit") != (v[0] == 0) || v[0] < 0 {
			t.Errorf("class %s costs %g", cls, v[0])
		}
		if _, ok := c.Spread["classes."+cls]; !ok && cls != "call" && cls != "return" && cls != "exit" && !strings.HasPrefix(cls, "cond") {
			t.Errorf("class %s has no spread", cls)
		}
	}
	for _, k := range []string{"per_packet", "call+return", "cond64.taken", "cond32.not_taken", "memory.packet.load",
		"memory.map_value.atomic", "helpers.map_lookup_elem.percpu_hash", "helpers.csum_diff"} {
		if s, ok := c.Spread[k]; !ok || s.High < s.Median || s.Max < s.High {
			t.Errorf("spread of %s: %+v", k, s)
		}
	}
	if tg.Estimated["classes.alu64"] || !tg.Estimated["helpers.tail_call"] || tg.Estimated["pcv.hash.traversals"] {
		t.Errorf("estimated: %v", tg.Estimated)
	}
	if v := tg.PCV["lpm_trie"]["stages"][0]; v <= 0 || v != calibrate.RoundUp(c.Spread["pcv.lpm_trie.stages"].High, 0.01) {
		t.Errorf("pcv: %v, spread of stages %+v", tg.PCV, c.Spread["pcv.lpm_trie.stages"])
	}

	// The target is used: a bound under it names it and its costs, and
	// its example packets still drive the kernel down the predicted path.
	// Whether the measured rates stay above the bound is timing, checked
	// by `make evidence` on an idle machine.
	for _, obj := range testobj.LibXDP(t) {
		base := strings.TrimSuffix(filepath.Base(obj), ".o")
		if base == "xdpdump_bpf" {
			continue // tracing programs
		}
		t.Run(base, func(t *testing.T) {
			// A check limit, not a time limit: the same search on every
			// machine, and a search that this quick calibration's costs
			// send astray ends as intermediate instead of taking the
			// package's whole time. Under a full calibration these
			// searches check at most 5 paths; with 3000 allowed, one
			// quick calibration's costs sent them past 700 paths each and
			// the package past its ten minutes.
			args := []string{"bound", "--json", "--workers", "1", "--measure", "--max-checks", "300", "--target", host, obj}
			if base == "xdp-dispatcher" {
				args = append(args, "--program", "xdp_dispatcher")
			}
			r := boundJSON(t, args)
			if r.Target.Name != "x86-64-host" || r.Basis != "calibrated" {
				t.Errorf("target %s, basis %q", r.Target.Name, r.Basis)
			}
			if r.Kind == "intermediate" {
				data, _ := os.ReadFile(host)
				t.Logf("search ended after 300 paths under this quick calibration, nothing to replay; target:\n%s", data)
				return
			}
			m := r.Paths[0].Measured
			if m == nil {
				t.Fatal("not measured")
			}
			if strings.Contains(m.Mismatch, "cannot be filled") {
				t.Logf("not replayable, its map of AF_XDP sockets cannot be filled: %s", m.Mismatch)
				return
			}
			if !m.VerdictMatches || !m.PathMatches || !(m.PacketRate > 0) {
				t.Errorf("measured: verdict match %v, path match %v (%s), %g pkt/s", m.VerdictMatches, m.PathMatches, m.Mismatch, m.PacketRate)
			}
			t.Logf("predicted %.3g pkt/s, measured %.3g", r.Bound.PacketRate, m.PacketRate)
		})
	}
}

func boundJSON(t *testing.T, args []string) *bound.Result {
	t.Helper()
	out, errs, code := dpperf(t, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var r bound.Result
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	return &r
}

func TestTargetsCalibrateUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"targets", "calibrate"}, "--write FILE or --host is required"},
		{[]string{"targets", "calibrate", "--write", "x.yaml", "--model", "fast"}, "--model must be"},
		{[]string{"targets", "calibrate", "--write", "x.yaml", "--percentile", "0"}, "--percentile"},
		{[]string{"targets", "calibrate", "--write", "x.yaml", "extra"}, "unexpected arguments"},
	} {
		_, errs, code := dpperf(t, c.args...)
		if code != 2 || !strings.Contains(errs, c.msg) {
			t.Errorf("%v: exit %d, %s", c.args, code, errs)
		}
	}
	if _, err := os.Stat("x.yaml"); err == nil {
		t.Error("x.yaml written")
	}
}

// TestBoundTargetHost: `targets calibrate --host` writes this machine's
// calibration into the user's cache; `--target host` then uses it, and the
// bound is a guarantee (basis calibrated), while the built-in x86-64
// table gives an estimate that says how to get a guarantee.
func TestBoundTargetHost(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	if _, errs, code := dpperf(t, "targets", "calibrate", "--host", "--quick"); code != 0 {
		t.Fatalf("calibrate --host: exit %d: %s", code, errs)
	}
	files, _ := filepath.Glob(filepath.Join(cache, "dpperf", "host-*.yaml"))
	if len(files) != 1 {
		t.Fatalf("cache holds %v", files)
	}
	out, errs, code := dpperf(t, "bound", "--json", "--target", "host", built(t, "fig2"))
	if code != 0 || strings.Contains(errs, "calibrating") {
		t.Fatalf("exit %d (the cached calibration should be used): %s", code, errs)
	}
	var r bound.Result
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if r.Basis != target.BasisCalibrated || r.Target.Name != calibrate.HostName {
		t.Errorf("basis %q, target %s", r.Basis, r.Target.Name)
	}
	text, _, _ := dpperf(t, "bound", "--target", "host", built(t, "fig2"))
	if !strings.Contains(text, "\nguarantee: ") || strings.Contains(text, "estimate") {
		t.Errorf("host bound not reported as a guarantee:\n%s", text)
	}
	// targets fit scales the cached calibration too.
	fitted := filepath.Join(t.TempDir(), "fit.yaml")
	if _, errs, code := dpperf(t, "targets", "fit", "--target", "host", "--write", fitted,
		"--groups", "alu+branch+memory+call,per_packet", "--from-samples", "testdata/fit-samples.json"); code != 0 || strings.Contains(errs, "calibrating") {
		t.Fatalf("targets fit --target host: exit %d (the cached calibration should be used): %s", code, errs)
	}
	if ft, err := target.Load(fitted); err != nil || ft.Name != calibrate.HostName+"-fit" || ft.Calibration.Fit == nil || ft.Calibration.Model != calibrate.HostModel {
		t.Errorf("fitted host target %v: %+v", err, ft)
	}
	est := boundJSON(t, []string{"bound", "--json", "--target", "x86-64", built(t, "fig2")})
	if est.Basis != target.BasisEstimated {
		t.Errorf("x86-64 basis %q", est.Basis)
	}
	text, _, _ = dpperf(t, "bound", "--target", "x86-64", built(t, "fig2"))
	if !strings.Contains(text, "\nestimate: ") || strings.Contains(text, "\nguarantee: ") || !strings.Contains(text, "--target host") {
		t.Errorf("x86-64 bound not reported as an estimate with a hint:\n%s", text)
	}
	if _, errs, code := dpperf(t, "targets", "calibrate", "--host", "--out", "x.yaml"); code != 2 || !strings.Contains(errs, "exclude") || !strings.Contains(errs, "--out is deprecated; use --write") {
		t.Errorf("--host with the deprecated --out: exit %d: %s", code, errs)
	}
}
