package profiling

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dpperf/dpperf/internal/fail"
	"github.com/dpperf/dpperf/profile/collect"
	"github.com/dpperf/dpperf/profile/task"
)

// The alternating of the collector needs its log and the BPF collector;
// both are checked before anything is attached (no root needed).
func TestLiveAlternateNeeds(t *testing.T) {
	s, err := Load("", task.Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []Live{
		{Setup: s, Alternate: time.Second},
		{Setup: s, Alternate: time.Second, AlternateLog: "w", Collector: collect.KindTraceFS},
	} {
		if _, err := l.Run(context.Background()); fail.ExitCode(err) != fail.ExitInput || !strings.Contains(err.Error(), "-alternate needs") {
			t.Errorf("%+v: %v", l, err)
		}
	}
}

// A run on a loop device profiles the command's reads, and a command
// that fails still gives the profile, with a warning.
func TestLiveLoopDevice(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("attaching to kernel tracepoints needs root")
	}
	img := filepath.Join(t.TempDir(), "img")
	if err := os.WriteFile(img, make([]byte, 8<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("losetup", "--find", "--show", img).CombinedOutput()
	if err != nil {
		t.Fatalf("losetup: %v: %s", err, out)
	}
	dev := strings.TrimSpace(string(out))
	defer exec.Command("losetup", "-d", dev).Run()
	s, err := Load("", task.Overrides{Device: filepath.Base(dev)})
	if err != nil {
		t.Fatal(err)
	}
	var notes bytes.Buffer
	l := Live{Setup: s, Notes: &notes, Quiet: true,
		Command: []string{"dd", "if=" + dev, "of=/dev/null", "bs=4k", "count=500", "iflag=direct"}}
	res, err := l.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	p := res.Profile
	if res.CommandErr != nil || !strings.HasPrefix(p.Source, "bpf (") || len(p.Groups) != 1 || p.Groups[0].Key != "read 4KiB" || p.Groups[0].Requests < 490 || len(p.Warnings) != 0 {
		t.Errorf("command error %v, source %q, warnings %q, groups %+v\nnotes: %s", res.CommandErr, p.Source, p.Warnings, p.Groups, notes.String())
	}
	l.Command = []string{"false"}
	res, err = l.Run(context.Background())
	if err != nil || res.CommandErr == nil || !strings.Contains(strings.Join(res.Profile.Warnings, "\n"), "command failed") {
		t.Errorf("failing command: %v, %+v", err, res)
	}
	// Ctrl-C while the command runs: the profile comes out, marked, and
	// the run says it was cut short (dpperf exits 130 on that).
	dir := t.TempDir()
	started, child := filepath.Join(dir, "started"), filepath.Join(dir, "child")
	l.Command = []string{"sh", "-c", "sleep 61 & echo $! > " + child + "; touch " + started + "; exec sleep 60"}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for {
			if _, err := os.Stat(started); err == nil {
				cancel()
				return
			}
			runtime.Gosched()
		}
	}()
	res, err = l.Run(ctx)
	if err != nil || !res.Interrupted || res.CommandErr != nil || !slices.Contains(res.Profile.Warnings, "interrupted: partial profile") {
		t.Errorf("interrupted command: %v, %+v", err, res)
	}
	// Its own child, in its process group, does not outlive it.
	pid, err := os.ReadFile(child)
	if err != nil {
		t.Fatal(err)
	}
	status := "/proc/" + strings.TrimSpace(string(pid)) + "/status"
	for i := 0; ; i++ {
		b, err := os.ReadFile(status)
		if err != nil || strings.Contains(string(b), "State:\tZ") {
			break
		}
		if i == 500 {
			t.Fatalf("the command's child still runs after the run ended:\n%s", b)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
