package calibrate

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/dpperf/dpperf/target"
)

// hostTarget is a calibrated target under key k, without measuring.
func hostTarget(t *testing.T, k HostKey) *target.Target {
	t.Helper()
	tg, err := target.Load("x86-64")
	if err != nil {
		t.Fatal(err)
	}
	tg.Name, tg.Basis = HostName, target.BasisCalibrated
	tg.Calibration = &target.Calibration{CPU: k.CPU, Microcode: k.Microcode, Kernel: k.Kernel, JIT: k.JIT,
		Date: "2026-01-02T03:04:05Z", Runs: 3, Percentile: 90, Model: HostModel, Spread: map[string]target.Spread{}}
	return tg
}

// TestHostCacheKey: a stored calibration is found under its own key only;
// a change of microcode, kernel or JIT settings misses it.
func TestHostCacheKey(t *testing.T) {
	c := HostCache{Dir: filepath.Join(t.TempDir(), "dpperf")}
	k := HostKey{CPU: "Example CPU", Microcode: "0x10", Kernel: "6.1.0", JIT: "enable=1 harden=0"}
	if _, _, err := c.Lookup(k); !errors.Is(err, ErrNoCalibration) {
		t.Fatalf("empty cache: %v", err)
	}
	path, err := c.Store(hostTarget(t, k))
	if err != nil {
		t.Fatal(err)
	}
	if path != c.Path(k) {
		t.Errorf("stored at %s, want %s", path, c.Path(k))
	}
	got, _, err := c.Lookup(k)
	if err != nil || got.Basis != target.BasisCalibrated || KeyOf(got) != k {
		t.Fatalf("lookup: %v, basis %v, key %+v", err, got, KeyOf(got))
	}
	for _, other := range []HostKey{
		{CPU: k.CPU, Microcode: "0x11", Kernel: k.Kernel, JIT: k.JIT},
		{CPU: k.CPU, Microcode: k.Microcode, Kernel: "6.1.1", JIT: k.JIT},
		{CPU: k.CPU, Microcode: k.Microcode, Kernel: k.Kernel, JIT: "enable=1 harden=2"},
	} {
		if other.ID() == k.ID() {
			t.Errorf("keys %+v and %+v share an ID", other, k)
		}
		if _, _, err := c.Lookup(other); !errors.Is(err, ErrNoCalibration) {
			t.Errorf("%+v: %v, want no calibration", other, err)
		}
	}
	// One priced under another model (an older cache) is measured again.
	th := hostTarget(t, k)
	th.Calibration.Model = Throughput
	if _, err := c.Store(th); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Lookup(k); !errors.Is(err, ErrNoCalibration) {
		t.Errorf("a cached %s calibration: %v, want none", Throughput, err)
	}
	if path, err = c.Store(hostTarget(t, k)); err != nil {
		t.Fatal(err)
	}
	// A file at the right name whose own key differs is not used.
	if err := os.Rename(path, c.Path(HostKey{CPU: "x"})); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Lookup(HostKey{CPU: "x"}); !errors.Is(err, ErrNoCalibration) {
		t.Errorf("mislabelled file: %v", err)
	}
	// A damaged file is an input error naming it.
	if err := os.WriteFile(c.Path(k), []byte("name: [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Lookup(k); err == nil || errors.Is(err, ErrNoCalibration) {
		t.Errorf("damaged file: %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(c.Dir, ".host-*")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// TestHostFirstUse: on a machine with no calibration Host measures one
// (here a subset, for speed), caches it under this host's key, and reuses
// it on the next call.
func TestHostFirstUse(t *testing.T) {
	c := HostCache{Dir: filepath.Join(t.TempDir(), "dpperf")}
	var l loads
	opts := Options{Quick: true, Runs: 3, Loaded: l.hook(t), only: subset}
	tg, path, measured, err := c.Host(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if !measured || tg.Name != HostName || tg.Basis != target.BasisCalibrated || KeyOf(tg) != ThisHost() || path != c.Path(ThisHost()) {
		t.Fatalf("first use: measured %v, target %s (%s), key %+v, path %s", measured, tg.Name, tg.Basis, KeyOf(tg), path)
	}
	n := len(l.progs)
	again, _, measured, err := c.Host(context.Background(), opts)
	if err != nil || measured || len(l.progs) != n {
		t.Fatalf("second use: measured %v (%d programs loaded), %v", measured, len(l.progs)-n, err)
	}
	if again.Calibration.Date != tg.Calibration.Date || again.PerPacket != tg.PerPacket {
		t.Errorf("second use read another calibration: %+v", again.Calibration)
	}
}

func TestThisHostKey(t *testing.T) {
	k := ThisHost()
	if k.CPU == "" || k.Kernel == "" || k.JIT == "" || k.Microcode == "" {
		t.Errorf("key %+v", k)
	}
}
