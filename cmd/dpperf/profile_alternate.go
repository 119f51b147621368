package main

import (
	"bufio"
	"context"
	"fmt"
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
// both. The returned channel is closed after the last window is written.
func alternate(ctx context.Context, col pausable, period time.Duration, logPath string) (<-chan error, error) {
	f, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	done := make(chan error, 1)
	go func() {
		w := bufio.NewWriter(f)
		fmt.Fprintln(w, "# dpperf profile run --alternate: state start_unix_ns end_unix_ns")
		on, start := true, time.Now()
		tick := time.NewTicker(period)
		defer tick.Stop()
		var err error
		for err == nil {
			select {
			case <-ctx.Done():
				fmt.Fprintf(w, "%s %d %d\n", state(on), start.UnixNano(), time.Now().UnixNano())
				err = context.Canceled
				continue
			case <-tick.C:
			}
			end := time.Now()
			if on {
				col.Pause()
			} else if err = col.Resume(); err != nil {
				break
			}
			fmt.Fprintf(w, "%s %d %d\n", state(on), start.UnixNano(), end.UnixNano())
			on, start = !on, time.Now()
		}
		if err == context.Canceled {
			err = nil
		}
		if ferr := w.Flush(); err == nil {
			err = ferr
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		done <- err
		close(done)
	}()
	return done, nil
}

func state(on bool) string {
	if on {
		return "on"
	}
	return "off"
}
