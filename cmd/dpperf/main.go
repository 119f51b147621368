// Command dpperf is a performance-engineering tool for network data planes
// and I/O paths: throughput bounds of eBPF/XDP programs, performance
// interfaces, analytical offload models, I/O-path profiles and trace
// recording. See README.md for usage.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/dpperf/dpperf/internal/fail"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	ctx, dog := newWatchdog(ctx)
	done := make(chan error, 1)
	go func() {
		done <- fail.Guard(func() error { return run(ctx, os.Args[1:], os.Stdout, os.Stderr) })
	}()
	err := dog.wait(ctx, done)
	stop()
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
	case errors.Is(err, context.Canceled) && ctx.Err() != nil && !errors.Is(err, errOverrun):
		fmt.Fprintln(os.Stderr, "dpperf: interrupted")
	default:
		fmt.Fprintln(os.Stderr, "dpperf:", err)
	}
	os.Exit(fail.ExitCode(err))
}
