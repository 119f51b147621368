package main

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/dpperf/dpperf/internal/fail"
	"github.com/dpperf/dpperf/profile/analyze"
)

// splitTrace writes the nvmet events of a one-host trace to target.txt,
// their times moved by offset (ns) and drift, and the rest to init.txt.
func splitTrace(t *testing.T, name string, offset, drift float64) (string, string) {
	t.Helper()
	f, err := os.Open(traceDir + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var init, target strings.Builder
	ts := regexp.MustCompile(` (\d+)\.(\d{6}): nvmet_req_`)
	sc := bufio.NewScanner(zr)
	for sc.Scan() {
		line := sc.Text()
		m := ts.FindStringSubmatchIndex(line)
		switch {
		case strings.HasPrefix(line, "#"):
			init.WriteString(line + "\n")
			target.WriteString(line + "\n")
		case m != nil:
			sec, _ := strconv.ParseInt(line[m[2]:m[3]], 10, 64)
			us, _ := strconv.ParseInt(line[m[4]:m[5]], 10, 64)
			ns := sec*1e9 + us*1e3
			ns += int64(offset + drift*float64(ns))
			target.WriteString(line[:m[2]] + fmt.Sprintf("%d.%06d", ns/1e9, ns%1e9/1e3) + line[m[5]:] + "\n")
		default:
			init.WriteString(line + "\n")
		}
	}
	a, b := filepath.Join(dir, "init.txt"), filepath.Join(dir, "target.txt")
	if err := os.WriteFile(a, []byte(init.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(b, []byte(target.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return a, b
}

// TestProfileAnalyzeTwoHosts joins a one-host trace split into the
// initiator's and the target's, the target's clock 7 s ahead and 30 ppm
// fast: every request joins, the offset is found within its bound, and
// the stages that cross hosts say so.
func TestProfileAnalyzeTwoHosts(t *testing.T) {
	const offset, drift = 7e9, 30e-6
	init, target := splitTrace(t, "nvme-tcp-read4k.txt.gz", offset, drift)
	out, errs, code := runCmd(t, "profile", "analyze", "--path", "nvme-tcp", "--json", "--input", init, "--input", target)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var p analyze.Profile
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatal(err)
	}
	h := p.Hosts
	if h == nil || h.Clock == nil || h.Join.Joined != 447 || h.Join.Initiator != 447 || h.Join.Target != 447 {
		t.Fatalf("hosts %+v", h)
	}
	// Timestamps in trace text have 1 µs resolution.
	if want := offset + drift*float64(h.Clock.RefNS); math.Abs(h.Clock.OffsetNS-want) > h.Clock.ErrorBoundNS+1e3 {
		t.Errorf("offset %.0f, true %.0f, bound %.0f", h.Clock.OffsetNS, want, h.Clock.ErrorBoundNS)
	}
	bounded := map[string]bool{}
	for _, st := range p.Groups[0].Stages {
		bounded[st.Name] = st.ClockBoundNS > 0
	}
	want := map[string]bool{"host-issue": false, "send-net-recv": true, "target-queue+target-device": false, "resp-net-recv": true, "host-complete": false}
	for name, b := range want {
		if bounded[name] != b {
			t.Errorf("stage %s: clock bound present %v, want %v", name, bounded[name], b)
		}
	}
}

func TestProfileAnalyzeTwoHostsUsage(t *testing.T) {
	init, target := splitTrace(t, "nvme-tcp-read4k.txt.gz", 0, 0)
	_, errs, code := runCmd(t, "profile", "analyze", "--path", "nvme-tcp", "--input", init, "--input", target, "--input", init)
	if code != fail.ExitInput || !strings.Contains(errs, "initiator's and the target's") {
		t.Errorf("three inputs: exit %d, %s", code, errs)
	}
	_, errs, code = runCmd(t, "profile", "analyze", "--input", init, "--input", target)
	if code != fail.ExitInput || !strings.Contains(errs, "no target stage") {
		t.Errorf("block path over two hosts: exit %d, %s", code, errs)
	}
}

func TestProfileRunTokenFile(t *testing.T) {
	dir := t.TempDir()
	short := filepath.Join(dir, "short")
	if err := os.WriteFile(short, []byte("abc\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--path", "nvme-tcp", "--peer", "169.254.0.2:7070"}, "need -token-file"},
		{[]string{"--path", "nvme-tcp", "--serve", "127.0.0.1:0", "--token-file", short}, short + ": a token is one word"},
		{[]string{"--path", "nvme-tcp", "--serve", "127.0.0.1:0", "--token-file", filepath.Join(dir, "none")}, "-token-file"},
	} {
		_, errs, code := runCmd(t, append([]string{"profile", "run"}, c.args...)...)
		if code != fail.ExitInput || !strings.Contains(errs, c.want) || strings.Count(strings.TrimSpace(errs), "\n") > 0 {
			t.Errorf("%v: exit %d, %q (want one line with %q)", c.args, code, errs, c.want)
		}
	}
}
