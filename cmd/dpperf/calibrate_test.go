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
// checks that the bound under it holds on every libxdp1 program: the
// example packet replayed with BPF_PROG_TEST_RUN runs at no less than
// 98% of the predicted rate.
func TestTargetsCalibrate(t *testing.T) {
	dir := t.TempDir()
	host := filepath.Join(dir, "host.yaml")
	out, errs, code := dpperf(t, "targets", "calibrate", "--quick", "--out", host)
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
		if v[0] <= 0 {
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

	for _, obj := range testobj.LibXDP(t) {
		base := strings.TrimSuffix(filepath.Base(obj), ".o")
		if base == "xdpdump_bpf" {
			continue // tracing programs
		}
		t.Run(base, func(t *testing.T) {
			// The time limit keeps a search that a quick calibration's
			// costs send astray from taking the package's whole time.
			args := []string{"bound", "--json", "--workers", "1", "--measure", "--time-limit", "60s", "--target", host, obj}
			if base == "xdp-dispatcher" {
				args = append(args, "--program", "xdp_dispatcher")
			}
			// The machine is shared: a replay slowed by other work is
			// tried again, twice at most.
			for try := 1; ; try++ {
				r := boundJSON(t, args)
				if r.Kind == "intermediate" {
					// Seen once in CI (xdpfilt_alw_all, over 10 minutes;
					// 0.4 s under build/host.yaml): not a wrong bound, but
					// no example packet to replay. The target is logged to
					// reproduce it.
					data, _ := os.ReadFile(host)
					t.Logf("search cut short after 60 s under this quick calibration, nothing to replay; target:\n%s", data)
					return
				}
				m := r.Paths[0].Measured
				if m == nil {
					t.Fatal("not measured")
				}
				if strings.Contains(m.Mismatch, "cannot be filled") {
					t.Logf("not comparable, its map of AF_XDP sockets cannot be filled: %s", m.Mismatch)
					return
				}
				ratio := m.PacketRate / r.Bound.PacketRate
				t.Logf("predicted %.3g pkt/s, measured %.3g (%.0f%%)", r.Bound.PacketRate, m.PacketRate, 100*ratio)
				if ratio >= 0.98 {
					return
				}
				if try == 3 {
					t.Fatalf("measured %.3g pkt/s, below 98%% of the bound %.3g", m.PacketRate, r.Bound.PacketRate)
				}
			}
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
		{[]string{"targets", "calibrate"}, "--out FILE is required"},
		{[]string{"targets", "calibrate", "--out", "x.yaml", "--model", "fast"}, "--model must be"},
		{[]string{"targets", "calibrate", "--out", "x.yaml", "--percentile", "0"}, "--percentile"},
		{[]string{"targets", "calibrate", "--out", "x.yaml", "extra"}, "unexpected arguments"},
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
