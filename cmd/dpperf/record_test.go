package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dpperf/dpperf/internal/fail"
	"github.com/dpperf/dpperf/record/analyze"
	"github.com/dpperf/dpperf/record/capture"
)

// TestRecordPipelineEndToEnd records the example pipeline with a kernel
// tracepoint, analyzes the recording and exports it for Perfetto.
func TestRecordPipelineEndToEnd(t *testing.T) {
	root := t.TempDir()
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"record", "--pipeline", "--eager-timeout", "--packets", "3000",
		"--tracepoint", "syscalls:sys_enter_getppid", "--dir", root, "--json", "--quiet"}, &stdout, &stderr)
	if err != nil {
		t.Fatalf("record: %v\n%s", err, stderr.String())
	}
	var out capture.Result
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("record --json: %v\n%s", err, stdout.String())
	}
	if out.Pipeline == nil || out.Pipeline.Received != 3000 || out.Kernel == nil || len(out.Streams) != 4 {
		t.Fatalf("record output %s", stdout.String())
	}
	if _, err := os.Stat(filepath.Join(out.Dir, "kernel", "metadata")); err != nil {
		t.Error(err)
	}
	stdout.Reset()
	perf := filepath.Join(root, "trace.json")
	if err := run(context.Background(), []string{"record", "analyze", out.Dir, "--json", "--perfetto", perf}, &stdout, &stderr); err != nil {
		t.Fatalf("analyze: %v\n%s", err, stderr.String())
	}
	var rep analyze.Report
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	// dpperf trace is the same analysis.
	analyzed := stdout.String()
	stdout.Reset()
	if err := run(context.Background(), []string{"trace", "--json", out.Dir}, &stdout, &stderr); err != nil || stdout.String() != analyzed {
		t.Errorf("trace --json differs from record analyze --json: %v", err)
	}
	var discarded uint64
	for _, s := range rep.Streams {
		discarded += s.Discarded
	}
	var rpcs uint64
	for _, r := range rep.RPCs {
		rpcs += r.Count
	}
	if rpcs+discarded < 3000 || rpcs == 0 {
		t.Errorf("analysis found %d RPCs (%d events discarded), want 3000", rpcs, discarded)
	}
	data, err := os.ReadFile(perf)
	if err != nil || !json.Valid(data) {
		t.Errorf("perfetto export missing or not JSON: %v", err)
	}
	stdout.Reset()
	xmlDir := filepath.Join(root, "tracecompass")
	if err := run(context.Background(), []string{"trace", out.Dir, "--histogram", "--tracecompass", xmlDir}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"dpperf-states.xml", "dpperf-latency.xml"} {
		if _, err := os.Stat(filepath.Join(xmlDir, f)); err != nil {
			t.Error(err)
		}
	}
	for _, want := range []string{"checkpoint durations", "trigger_once", "queue fill", "duration histogram"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("text report lacks %q", want)
		}
	}
	stdout.Reset()
	if err := run(context.Background(), []string{"record", "repair", out.Dir}, &stdout, &stderr); err != nil || !strings.Contains(stdout.String(), "nothing to repair") {
		t.Errorf("repair: %v %s", err, stdout.String())
	}
}

func TestRecordBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yml")
	_ = os.WriteFile(bad, []byte("period: 1s\npolicies:\n  - label: a\n    backends: [ftrace]\n"), 0o644)
	notrace := filepath.Join(dir, "empty")
	_ = os.Mkdir(notrace, 0o755)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"record"}, "nothing to record"},
		{[]string{"record", "--config", bad, "--duration", "1s"}, bad + `: line 4: unknown backend "ftrace"`},
		{[]string{"record", "--tracepoint", "nosuch", "--duration", "1s"}, "want CATEGORY:NAME"},
		{[]string{"record", "--tracepoint", "nosuch:tracepoint", "--duration", "1s"}, "not found in tracefs"},
		{[]string{"record", "analyze", filepath.Join(dir, "missing")}, "not a recording directory"},
		{[]string{"record", "analyze", notrace}, "no CTF trace"},
		{[]string{"record", "analyze"}, "want one or more recording directories"},
		{[]string{"trace", notrace}, "trace: no CTF trace"},
		{[]string{"trace", "--perfetto", filepath.Join(dir, "x.pftrace"), "a", "b"}, "--perfetto and --tracecompass take one recording directory, got 2"},
		{[]string{"trace", notrace, filepath.Join(dir, "missing")}, "not a recording directory"},
	} {
		err := run(context.Background(), tc.args, &bytes.Buffer{}, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), tc.want) || fail.ExitCode(err) != fail.ExitInput {
			t.Errorf("%v: error %v (exit %d), want %q and exit 2", tc.args, err, fail.ExitCode(err), tc.want)
		}
	}
}

// TestTracePerfettoFormats records the example pipeline and exports it
// for Perfetto in both formats: the protobuf by default, JSON for a .json
// name or --perfetto-format json; the protobuf is the smaller by far.
func TestTracePerfettoFormats(t *testing.T) {
	root := t.TempDir()
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"record", "--pipeline", "--packets", "5000", "--dir", root, "--json", "--quiet"}, &stdout, &stderr)
	if err != nil {
		t.Fatalf("record: %v\n%s", err, stderr.String())
	}
	if stderr.Len() != 0 {
		t.Errorf("record --quiet printed %q", stderr.String())
	}
	var out capture.Result
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	size := map[string]int{}
	for _, c := range []struct{ file, format string }{
		{"t.pftrace", "proto"}, {"t.json", "json"}, {"t.out", "json"},
	} {
		args := []string{"trace", "--perfetto", filepath.Join(root, c.file), out.Dir}
		if c.file == "t.out" {
			args = append(args, "--perfetto-format", "json")
		}
		stdout.Reset()
		if err := run(context.Background(), args, &stdout, &stderr); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		data, err := os.ReadFile(filepath.Join(root, c.file))
		if err != nil {
			t.Fatal(err)
		}
		if json.Valid(data) != (c.format == "json") {
			t.Errorf("%s: JSON %v, want format %s", c.file, json.Valid(data), c.format)
		}
		size[c.file] = len(data)
	}
	if size["t.pftrace"]*5 > size["t.json"] {
		t.Errorf("protobuf %d bytes, JSON %d: want at least 5 times smaller", size["t.pftrace"], size["t.json"])
	}
	t.Logf("perfetto export: protobuf %d bytes, JSON %d bytes", size["t.pftrace"], size["t.json"])
	err = run(context.Background(), []string{"trace", "--perfetto", "x", "--perfetto-format", "xml", out.Dir}, &stdout, &stderr)
	if fail.ExitCode(err) != 2 {
		t.Errorf("--perfetto-format xml: %v (exit %d), want a usage error", err, fail.ExitCode(err))
	}
}

// TestTraceSeveralRecordings: the README's record then trace, run twice,
// leaves two recordings under one directory; trace reads both, a report
// each.
func TestTraceSeveralRecordings(t *testing.T) {
	root := t.TempDir()
	for range 2 {
		if _, errs, code := dpperf(t, "record", "--pipeline", "--packets", "2000", "--dir", root, "--quiet"); code != 0 {
			t.Fatalf("record: exit %d: %s", code, errs)
		}
	}
	dirs, _ := filepath.Glob(filepath.Join(root, "*"))
	if len(dirs) != 2 {
		t.Fatalf("%d recordings: %v", len(dirs), dirs)
	}
	out, errs, code := dpperf(t, append([]string{"trace"}, dirs...)...)
	if code != 0 || strings.Count(out, "== ") != 2 || strings.Count(out, "checkpoint durations") != 2 {
		t.Fatalf("trace of two recordings: exit %d: %s\n%s", code, errs, out)
	}
	out, errs, code = dpperf(t, append([]string{"trace", "--json"}, dirs...)...)
	var rs analyze.Reports
	if code != 0 || json.Unmarshal([]byte(out), &rs) != nil || len(rs.Recordings) != 2 || rs.Recordings[1].Dir != dirs[1] {
		t.Fatalf("trace --json of two recordings: exit %d: %s", code, errs)
	}
}
