package calibrate

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/dpperf/dpperf/internal/atomicfile"
	"github.com/dpperf/dpperf/internal/fail"
	"github.com/dpperf/dpperf/target"
)

// HostName is the name of the calibrated target of this host
// (`--target host`).
const HostName = "x86-64-host"

// HostRuns is the runs of a first-use calibration of this host: each run
// of the whole set of micro-programs waits out some 3 s of RCU grace
// periods (every timed test run swaps the XDP dispatcher), so 11 runs
// take about a minute; the cost is still the 90th percentile of the runs,
// the second slowest, with the spread recorded.
const HostRuns = 11

// HostModel is how the host's guarantee prices instruction classes: by
// the dearer of a class's dependent chain and its independent operations.
// A sum of throughput costs holds only where the core overlaps the
// operations, which a parser's loads that compute the next offset or a
// hash's rounds do not allow; the evidence (docs/evidence, 2026-11-28)
// found paths up to 12% slower than their throughput price when the core
// ran in its slow state. The expected rate keeps the throughput model's
// medians from the runs as measured (Calibration.TypicalSpread).
const HostModel = Latency

// HostTarget is the host's target from a calibration: costs under
// HostModel (with the typical spreads Target keeps for the expected rate).
func (r *Result) HostTarget() (*target.Target, error) {
	return r.Target(HostName, HostModel)
}

// HostKey is what a calibration of this host depends on: when any of it
// changes (a new CPU, microcode or kernel, the JIT switched or hardened),
// the costs must be measured again.
type HostKey struct {
	CPU       string // model name from /proc/cpuinfo
	Microcode string // microcode revision from /proc/cpuinfo
	Kernel    string // kernel release
	JIT       string // net.core.bpf_jit_enable and bpf_jit_harden, "enable=1 harden=0"
}

// ThisHost reads the key of the running machine.
func ThisHost() HostKey {
	return HostKey{CPU: hostCPU(), Microcode: cpuinfoField("microcode"), Kernel: hostKernel(), JIT: jitSettings()}
}

// ID is a short digest of the key, for file names.
func (k HostKey) ID() string {
	h := sha256.Sum256([]byte(strings.Join([]string{k.CPU, k.Microcode, k.Kernel, k.JIT}, "\n")))
	return hex.EncodeToString(h[:6])
}

// KeyOf returns the host key a calibrated target was measured under
// (zero when the target holds no calibration).
func KeyOf(t *target.Target) HostKey {
	c := t.Calibration
	if c == nil {
		return HostKey{}
	}
	return HostKey{CPU: c.CPU, Microcode: c.Microcode, Kernel: c.Kernel, JIT: c.JIT}
}

// HostCache is where calibrations of this host are kept, one file per
// host key: DIR/dpperf/host-ID.yaml under the user's cache directory.
type HostCache struct {
	Dir string // the folder of the files; "" : UserCacheDir()/dpperf
}

// DefaultHostCache is the cache under os.UserCacheDir ($XDG_CACHE_HOME or
// ~/.cache on Linux).
func DefaultHostCache() (HostCache, error) {
	d, err := os.UserCacheDir()
	if err != nil {
		return HostCache{}, fmt.Errorf("host target: no cache directory: %w", err)
	}
	return HostCache{Dir: filepath.Join(d, "dpperf")}, nil
}

// Path is the file of the calibration under key k.
func (c HostCache) Path(k HostKey) string {
	return filepath.Join(c.Dir, "host-"+k.ID()+".yaml")
}

// ErrNoCalibration: the cache holds no calibration for this host's key.
var ErrNoCalibration = errors.New("no calibration of this host")

// Lookup returns the cached calibration for key k. A file whose own key
// differs from k (edited, or a digest collision) counts as missing.
func (c HostCache) Lookup(k HostKey) (*target.Target, string, error) {
	path := c.Path(k)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, path, ErrNoCalibration
	}
	if err != nil {
		return nil, path, fail.Input(path, err)
	}
	t, err := target.Parse(data)
	if err != nil {
		return nil, path, fail.Input(path, err)
	}
	if KeyOf(t) != k || t.Calibration.Model != HostModel {
		return nil, path, ErrNoCalibration // another host's, or priced another way
	}
	return t, path, nil
}

// Store writes a calibrated target into the cache under its own key, to a
// temporary file renamed into place, and returns the path.
func (c HostCache) Store(t *target.Target) (string, error) {
	data, err := target.Marshal(t)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(c.Dir, 0o755); err != nil {
		return "", fmt.Errorf("host target: %w", err)
	}
	path := c.Path(KeyOf(t))
	if err := atomicfile.WriteFile(path, data); err != nil {
		return "", fmt.Errorf("host target: write %s: %w", path, err)
	}
	return path, nil
}

// Host returns the calibrated target of this host: the cached one for
// its key, or, when there is none, a new calibration (opts, with HostRuns
// runs unless they say otherwise; root needed) that is cached for later
// runs. measured reports which.
func (c HostCache) Host(ctx context.Context, opts Options) (t *target.Target, path string, measured bool, err error) {
	key := ThisHost()
	t, path, err = c.Lookup(key)
	if !errors.Is(err, ErrNoCalibration) {
		return t, path, false, err
	}
	if os.Geteuid() != 0 {
		return nil, path, false, fail.NeedsRootf("--target host: this host (%s, Linux %s) has no calibration yet, and calibrating needs root (BPF_PROG_TEST_RUN): run 'dpperf targets calibrate --host' once as root", key.CPU, key.Kernel)
	}
	if opts.Runs == 0 {
		opts.Runs = HostRuns
	}
	res, err := Run(ctx, opts)
	if err != nil {
		return nil, path, false, err
	}
	if t, err = res.HostTarget(); err != nil {
		return nil, path, false, err
	}
	path, err = c.Store(t)
	return t, path, true, err
}

// cpuinfoField is the value of the first line of /proc/cpuinfo named
// field, or "unknown".
func cpuinfoField(field string) string {
	data, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown"
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == field {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

// jitSettings reads the sysctls that change the code the JIT emits.
func jitSettings() string {
	read := func(name string) string {
		data, err := os.ReadFile("/proc/sys/net/core/" + name)
		if err != nil {
			return "?"
		}
		return strings.TrimSpace(string(data))
	}
	return "enable=" + read("bpf_jit_enable") + " harden=" + read("bpf_jit_harden")
}
