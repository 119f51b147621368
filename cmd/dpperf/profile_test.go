package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dpperf/dpperf/internal/fail"
	"github.com/dpperf/dpperf/profile/report"
)

const traceDir = "../../profile/testdata/"

func runCmd(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	err := run(context.Background(), args, &out, &errb)
	if err != nil {
		errb.WriteString(err.Error())
	}
	return out.String(), errb.String(), fail.ExitCode(err)
}

func TestProfileAnalyzeAndCompare(t *testing.T) {
	dir := t.TempDir()
	base, loaded := filepath.Join(dir, "base.json"), filepath.Join(dir, "loaded.json")
	txt := filepath.Join(dir, "r.txt")
	_, errs, code := runCmd(t, "profile", "analyze", traceDir+"block-qd1.txt.gz", "--json", "-o", base, "--html", filepath.Join(dir, "r.html"), "--text", txt)
	if code != 0 {
		t.Fatalf("analyze: exit %d: %s", code, errs)
	}
	out := readFile(t, txt)
	if !strings.Contains(out, "group read 4KiB: 3000 requests") || !strings.Contains(out, "D2C") {
		t.Errorf("text report:\n%s", out)
	}
	if _, _, code := runCmd(t, "profile", "analyze", "-q", "--type", "read", "--size", "4K", "--json", "-o", loaded, traceDir+"block-qd32c.txt.gz"); code != 0 {
		t.Fatal("analyze loaded failed")
	}
	f, _ := os.Open(loaded)
	p, err := report.ReadProfile(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Groups) != 1 || p.Groups[0].Key != "read 4KiB" || p.Filter != "type read size 4KiB" {
		t.Errorf("filtered profile: filter %q groups %+v", p.Filter, p.Groups)
	}
	out, errs, code = runCmd(t, "profile", "compare", base, loaded)
	if code != 0 || !strings.Contains(out, "bottleneck: D2C") {
		t.Errorf("compare: exit %d\n%s%s", code, out, errs)
	}
	cjs := filepath.Join(dir, "c.json")
	out, errs, code = runCmd(t, "profile", "compare", base, loaded, "--json", "-o", cjs)
	if code != 0 || out != "" || !strings.Contains(readFile(t, cjs), `"schema": "dpperf.profile.compare/v1"`) {
		t.Errorf("compare --json -o: exit %d, stdout %q: %s", code, out, errs)
	}
	// The former spelling --json FILE gets the new one in its error.
	_, errs, code = runCmd(t, "profile", "analyze", traceDir+"block-qd1.txt.gz", "--json", base)
	if code != fail.ExitInput || !strings.Contains(errs, "--json -o "+base) {
		t.Errorf("--json FILE: exit %d: %s", code, errs)
	}
	_, errs, code = runCmd(t, "profile", "compare", base, loaded, "--fail-above", "2")
	if code != fail.ExitRequirement || !strings.Contains(errs, "LAD") {
		t.Errorf("--fail-above: exit %d: %s", code, errs)
	}
	if _, _, code = runCmd(t, "profile", "compare", base, loaded, "--fail-above", "1000"); code != 0 {
		t.Errorf("--fail-above 1000: exit %d", code)
	}
}

func TestProfileOnline(t *testing.T) {
	out, errs, code := runCmd(t, "profile", "analyze", "--interval", "100ms", "-group", "type", traceDir+"block-qd1.txt.gz")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if n := strings.Count(out, "source interval"); n < 2 {
		t.Errorf("%d interval reports in a 0.3 s trace at 100ms:\n%s", n, out)
	}
}

func TestProfileBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	badTrace := write("bad.txt", "# x\n fio-1 [000] ..... 1.000001: block_rq_issue: 7,0 R 4096 () zz + 8 [fio]\n")
	badTask := write("task.yaml", "workload:\n  size: 4Q\n")
	notProfile := write("np.json", `{"schema":"something/v2"}`)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"profile", "analyze", badTrace}, badTrace + ": line 2: block_rq_issue: bad sector"},
		{[]string{"profile", "analyze", filepath.Join(dir, "missing.txt")}, "missing.txt"},
		{[]string{"profile", "analyze", "--task", badTask, badTrace}, badTask + ": parse task: line 2: bad size"},
		{[]string{"profile", "analyze", "--path", "nope", badTrace}, `unknown path "nope"`},
		{[]string{"profile", "analyze", "--size", "8K-4K", badTrace}, "bad range"},
		{[]string{"profile", "analyze", "--dev", "nosuchdisk", badTrace}, "no block device"},
		{[]string{"profile", "analyze"}, "no trace file"},
		{[]string{"profile", "compare", notProfile, notProfile}, notProfile + ": not a profile"},
		{[]string{"profile", "compare", notProfile}, "want two JSON profiles"},
		{[]string{"profile", "frobnicate"}, "unknown action"},
		{[]string{"profile", "paths", "nope"}, "unknown path"},
		{[]string{"profile", "run", "--alternate", "1s"}, "-alternate needs -alternate-log FILE"},
		{[]string{"profile", "run", "--alternate", "-1s", "--alternate-log", "w"}, "--alternate must be at least 0, got -1s"},
		{[]string{"profile", "run", "--collector", "tracefs", "--alternate", "1s", "--alternate-log", "w"}, "-alternate needs the bpf collector"},
	}
	for _, c := range cases {
		_, errs, code := runCmd(t, c.args...)
		if code != fail.ExitInput || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", c.args, code, errs, c.want)
		}
		if strings.Count(strings.TrimSpace(errs), "\n") > 0 && !strings.Contains(errs, "Usage") {
			t.Errorf("%v: error spans lines: %q", c.args, errs)
		}
	}
}

func TestProfilePaths(t *testing.T) {
	out, _, code := runCmd(t, "profile", "paths")
	if code != 0 || !strings.Contains(out, "block") || !strings.Contains(out, "nvme-tcp") || !strings.Contains(out, "D2C") {
		t.Errorf("paths: %d\n%s", code, out)
	}
	out, _, code = runCmd(t, "profile", "paths", "nvme-tcp")
	if code != 0 || !strings.Contains(out, "kprobe: nvmet_bdev_execute_rw") {
		t.Errorf("paths nvme-tcp: %d\n%s", code, out)
	}
}

// Traces captured inside the qemu guest (Debian 6.1 kernel, nvmet-tcp on
// 127.0.0.1, null_blk namespace): the nvme-tcp path correlates host and
// target events. For R2T writes the 6.1 kernel's nvme_complete_rq prints
// a command id that no longer matches the command (the capsule memory is
// reused for the data PDU), so HOST_CQE cannot be matched and the response
// stage is reported merged with host-complete.
func TestProfileNVMeTCPTraces(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		trace, group string
		stages       []string
	}{
		{"nvme-tcp-read4k.txt.gz", "read 4KiB", []string{"host-issue", "send-net-recv", "target-queue+target-device", "resp-net-recv", "host-complete"}},
		{"nvme-tcp-write128k.txt.gz", "write 128KiB", []string{"host-issue", "send-net-recv", "target-queue+target-device", "resp-net-recv+host-complete"}},
	} {
		js := filepath.Join(dir, c.trace+".json")
		if _, errs, code := runCmd(t, "profile", "analyze", "-q", "--path", "nvme-tcp", "--json", "-o", js, traceDir+c.trace); code != 0 {
			t.Fatalf("%s: exit %d: %s", c.trace, code, errs)
		}
		f, _ := os.Open(js)
		p, err := report.ReadProfile(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Groups) != 1 || p.Groups[0].Key != c.group || p.Groups[0].Requests < 200 {
			t.Fatalf("%s: groups %+v", c.trace, p.Groups)
		}
		var got []string
		for _, s := range p.Groups[0].Stages {
			got = append(got, s.Name)
		}
		if strings.Join(got, ",") != strings.Join(c.stages, ",") {
			t.Errorf("%s: stages %v, want %v", c.trace, got, c.stages)
		}
		for _, e := range p.Events {
			if e.Name == "TARGET_EXEC" && e.Observed {
				t.Errorf("%s: kprobe event reported observed", c.trace)
			}
		}
	}
}

func TestProfileSpill(t *testing.T) {
	dir := t.TempDir()
	tk := filepath.Join(dir, "task.yaml")
	text := "profiling:\n  buffer: {when_full: spill, spill_dir: " + dir + "}\n"
	if err := os.WriteFile(tk, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errs, code := runCmd(t, "profile", "analyze", "-q", "--task", tk, traceDir+"block-qd1.txt.gz")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	data, err := os.ReadFile(filepath.Join(dir, "records-block.csv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 3001 || lines[0] != "start_ns,op,bytes,dev,cpu,Q,G,I,D,C" || !strings.Contains(lines[1], ",read,4096,7:0,") {
		t.Errorf("%d lines, first %q %q", len(lines), lines[0], lines[1])
	}
}

func TestProfileContents(t *testing.T) {
	dir := t.TempDir()
	js := filepath.Join(dir, "t.json")
	txt := filepath.Join(dir, "t.txt")
	_, errs, code := runCmd(t, "profile", "analyze", "--contents", "throughput,queue", "--json", "-o", js, "--text", txt, traceDir+"block-qd1.txt.gz")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	out := readFile(t, txt)
	if !strings.Contains(out, "IOPS") || !strings.Contains(out, "in flight") || strings.Contains(out, "D2C") || strings.Contains(out, "Q→C") {
		t.Errorf("throughput,queue report:\n%s", out)
	}
	_, errs, code = runCmd(t, "profile", "compare", js, js)
	if code != fail.ExitInput || !strings.Contains(errs, "compare needs latency and breakdown") {
		t.Errorf("compare of a profile without breakdown: exit %d: %s", code, errs)
	}
	_, errs, code = runCmd(t, "profile", "analyze", "--contents", "latency,bogus", traceDir+"block-qd1.txt.gz")
	if code != fail.ExitInput || !strings.Contains(errs, "-contents") {
		t.Errorf("bad --contents: exit %d: %s", code, errs)
	}
}

func TestProfileAnalyzeInput(t *testing.T) {
	dir := t.TempDir()
	_, errs, code := runCmd(t, "profile", "analyze", "--input", dir)
	if code != fail.ExitInput || !strings.Contains(errs, "no CTF trace") || !strings.Contains(errs, dir) {
		t.Errorf("empty recording: exit %d: %s", code, errs)
	}
	_, errs, code = runCmd(t, "profile", "analyze", "--input", dir, traceDir+"block-qd1.txt.gz")
	if code != fail.ExitInput || !strings.Contains(errs, "one recording directory") {
		t.Errorf("recording and text file: exit %d: %s", code, errs)
	}
}

// With the kprobe's arguments decoded the target's stages are measured
// apart (traces recorded in the qemu guest with the path's kprobe on
// nvmet_bdev_execute_rw; this machine has no kprobes). For R2T writes the
// response and host completion stay merged (HOST_CQE cannot be matched).
func TestProfileKprobeTrace(t *testing.T) {
	for trace, merged := range map[string]bool{"nvme-tcp-read4k-kprobe.txt.gz": false, "nvme-tcp-write128k-kprobe.txt.gz": true} {
		out, errs, code := runCmd(t, "profile", "analyze", "--path", "nvme-tcp", "--dev", "259,0", traceDir+trace)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", trace, code, errs)
		}
		if !strings.Contains(out, "  target-queue ") || !strings.Contains(out, "  target-device ") || strings.Contains(out, "resp-net-recv+host-complete (merged)") != merged {
			t.Errorf("%s: report:\n%s", trace, out)
		}
	}
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
