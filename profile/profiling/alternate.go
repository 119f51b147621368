package profiling

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"time"
)

// pausable is a collector whose programs can be detached and attached
// again while it runs (collect.BPF).
type pausable interface {
	Pause()
	Resume() error
}

// alternate measures the collector's overhead on the running workload:
// starting with the collector on, it detaches and attaches the collector
// every period until ctx ends, and writes each window to log as a line
// "on|off START END" (nanoseconds since the Unix epoch). A window starts
// once the programs are attached or detached. The windows let a script
// compare the workload's own throughput log between neighbouring windows
// without and with the collector (scripts/e2e/profile-overhead.sh);
// alternating within one process leaves dpperf's start-up and exit out of
// both. The returned channel receives the outcome once the log is closed.
func alternate(ctx context.Context, col pausable, period time.Duration, logPath string) (<-chan error, error) {
	f, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	done := make(chan error, 1)
	go func() {
		w := bufio.NewWriter(f)
		err := writeWindows(ctx, col, period, w)
		if ferr := w.Flush(); err == nil {
			err = ferr
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		done <- err
	}()
	return done, nil
}

// writeWindows alternates the collector and writes the windows to w. It
// returns nil when ctx ends (after the last window), or the error of an
// attach that failed.
func writeWindows(ctx context.Context, col pausable, period time.Duration, w io.Writer) error {
	fmt.Fprintln(w, "# dpperf profile run --alternate: state start_unix_ns end_unix_ns")
	tick := time.NewTicker(period)
	defer tick.Stop()
	for on, start := true, time.Now(); ; on, start = !on, time.Now() {
		select {
		case <-ctx.Done():
		case <-tick.C:
		}
		// Both may be ready: the end of ctx wins, so no transition
		// follows it.
		if ctx.Err() != nil {
			fmt.Fprintf(w, "%s %d %d\n", state(on), start.UnixNano(), time.Now().UnixNano())
			return nil
		}
		end := time.Now()
		if on {
			col.Pause()
		} else if err := col.Resume(); err != nil {
			return err
		}
		fmt.Fprintf(w, "%s %d %d\n", state(on), start.UnixNano(), end.UnixNano())
	}
}

func state(on bool) string {
	if on {
		return "on"
	}
	return "off"
}
