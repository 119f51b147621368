package main

import (
	"context"
	"fmt"
	"io"

	"github.com/dpperf/dpperf/calibrate"
	"github.com/dpperf/dpperf/internal/cli"
	"github.com/dpperf/dpperf/target"
)

// hostTarget is the name --target takes for this machine's calibration.
const hostTarget = "host"

// loadTarget reads a built-in target, a target file, or, for "host", this
// machine's calibration: cached under the user's cache directory per host
// key (CPU, microcode, kernel, JIT settings), measured on first use.
func loadTarget(ctx context.Context, name string, stderr io.Writer) (*target.Target, error) {
	if name != hostTarget {
		return target.Load(name)
	}
	cache, err := calibrate.DefaultHostCache()
	if err != nil {
		return nil, err
	}
	key := calibrate.ThisHost()
	if t, _, err := cache.Lookup(key); err == nil {
		return t, nil
	}
	fmt.Fprintf(stderr, "calibrating this host (%s, Linux %s) for --target host: about a minute, once\n", key.CPU, key.Kernel)
	opts := calibrate.Options{}
	var done func()
	opts.Progress, done = cli.StatusLine(stderr)
	t, path, _, err := cache.Host(ctx, opts)
	done()
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(stderr, "calibrated this host: %s (reused until the CPU, microcode, kernel or JIT settings change)\n", path)
	return t, nil
}
