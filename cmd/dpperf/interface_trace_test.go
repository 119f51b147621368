package main

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dpperf/dpperf/internal/golden"

	"github.com/dpperf/dpperf/internal/fail"
)

const mixedPcap = "../../examples/interface/mixed.pcap"

// TestInterfaceTraceGolden: the deployment interface of flowtable on the
// mixed trace under the x86-64 table, with the root cause of the slowest
// 10% (go test ./cmd/dpperf -run InterfaceTrace -update rewrites it).
func TestInterfaceTraceGolden(t *testing.T) {
	obj := built(t, "flowtable")
	out, errs, code := dpperf(t, "interface", "--solver-timeout", "60s", "--metric", "cost", "--target", "x86-64",
		"--trace", mixedPcap, "--slow", "90", obj)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	golden.CheckString(t, "interface/trace_flowtable.txt", out)
	out, errs, code = dpperf(t, "interface", "--solver-timeout", "60s", "--metric", "cost", "--target", "x86-64", "--resolution", "40",
		"--trace", mixedPcap, "--percentile", "50,99.9", "--json", obj)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	golden.CheckString(t, "interface/trace_flowtable_r40.json", out)
}

// TestInterfaceMeasureInsns times every class in the kernel (root; this
// must run in CI) and checks that the instruction prediction equals the
// interpreter's count on every representative: error 0 everywhere.
func TestInterfaceMeasureInsns(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("--measure needs root (BPF_PROG_TEST_RUN); run the tests as root")
	}
	obj := built(t, "flowtable")
	out, errs, code := dpperf(t, "interface", "--trace", mixedPcap, "--measure", "--runs", "3", "--per-class", "2", obj)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	rows := regexp.MustCompile(`(?m)^#\s+class \d+\s+\d+\s+(\S+)\s+(\S+)\s+(\S+)`).FindAllStringSubmatch(out, -1)
	if len(rows) < 15 {
		t.Fatalf("%d class rows in:\n%s", len(rows), out)
	}
	for _, r := range rows {
		if r[1] != r[2] || r[3] != "+0.0%" {
			t.Errorf("predicted %s, interpreter %s, error %s", r[1], r[2], r[3])
		}
	}
	if !strings.Contains(out, "median absolute percentage error over") || !strings.Contains(out, ": 0.0%") {
		t.Errorf("no zero median error in:\n%s", out)
	}
}

func TestInterfaceTraceBadInput(t *testing.T) {
	obj := built(t, "flowtable")
	dir := t.TempDir()
	raw := filepath.Join(dir, "raw.pcap")
	hdr := make([]byte, 24)
	binary.LittleEndian.PutUint32(hdr[0:], 0xa1b2c3d4)
	binary.LittleEndian.PutUint16(hdr[4:], 2)
	binary.LittleEndian.PutUint16(hdr[6:], 4)
	binary.LittleEndian.PutUint32(hdr[16:], 65535)
	binary.LittleEndian.PutUint32(hdr[20:], 101) // LINKTYPE_RAW
	rec := make([]byte, 16+20)
	binary.LittleEndian.PutUint32(rec[8:], 20)
	binary.LittleEndian.PutUint32(rec[12:], 20)
	rec[16] = 0x45
	hdr = append(hdr, rec...)
	if err := os.WriteFile(raw, hdr, 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.pcap")
	cases := []struct {
		name string
		args []string
		file string
	}{
		{"missing pcap", []string{"--trace", missing}, missing},
		{"not ethernet", []string{"--trace", raw}, raw},
		{"missing maps", []string{"--trace", mixedPcap, "--maps", filepath.Join(dir, "state.json")}, "state.json"},
		{"bad slow", []string{"--trace", mixedPcap, "--slow", "fast"}, "--slow"},
		{"bad percentile", []string{"--trace", mixedPcap, "--percentile", "50,x"}, "--percentile"},
		{"no trace", []string{"--slow", "90"}, "--trace"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, errs, code := dpperf(t, append(append([]string{"interface"}, c.args...), obj)...)
			if code != fail.ExitInput {
				t.Errorf("exit %d, want %d: %s", code, fail.ExitInput, errs)
			}
			if strings.Count(errs, "\n") != 1 || !strings.Contains(errs, c.file) {
				t.Errorf("want one line naming %s, got %q", c.file, errs)
			}
		})
	}
}

// TestInterfaceMaxDepthGolden: xdpfilt_alw_ip cut at 6 decisions, as
// thresholds and as Python at a mid resolution, with the bounded classes
// marked (go test ./cmd/dpperf -run InterfaceMaxDepth -update rewrites it).
func TestInterfaceMaxDepthGolden(t *testing.T) {
	obj := "/usr/lib/x86_64-linux-gnu/bpf/xdpfilt_alw_ip.o"
	out, errs, code := dpperf(t, "interface", "--solver-timeout", "60s", "--max-depth", "6", "--thresholds", obj)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	golden.CheckString(t, "interface/xdpfilt_alw_ip_d6_thresholds.txt", out)
	out, errs, code = dpperf(t, "interface", "--solver-timeout", "60s", "--max-depth", "6", "--resolution", "60", obj)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "not explored further") {
		t.Errorf("no class is marked as not explored:\n%s", out)
	}
	golden.CheckString(t, "interface/xdpfilt_alw_ip_d6_r60.py", out)
	if _, _, code = dpperf(t, "interface", "--max-depth", "-1", obj); code != fail.ExitInput {
		t.Errorf("--max-depth -1: exit %d, want %d", code, fail.ExitInput)
	}
}
