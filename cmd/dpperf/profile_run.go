package main

import (
	"context"
	"fmt"
	"io"

	"github.com/dpperf/dpperf/internal/fail"
	"github.com/dpperf/dpperf/profile/collect"
	"github.com/dpperf/dpperf/profile/profiling"
)

func runProfileRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	pf := newProfileFlags("profile run", "profile run [flags] [-- COMMAND ARGS...]", stderr)
	fs := pf.fs
	collector := fs.String("collector", "auto", "bpf, tracefs, or auto (bpf when it has programs for every event of the path)")
	var l profiling.Live
	fs.DurationVar(&l.Duration, "duration", 0, "stop after this long (default: task duration, else when COMMAND exits or on Ctrl-C)")
	fs.IntVar(&l.BufferKB, "buffer-kb", 0, "kernel buffer size in KiB (ring buffer; per CPU for tracefs)")
	fs.StringVar(&l.Listen, "listen", "", "serve Prometheus metrics on this address (e.g. :9464)")
	fs.StringVar(&l.Programs, "bpf-programs", "auto", "BPF program type: auto (tp_btf when the kernel has BTF), tp_btf, tracepoint, or empty (programs that return at once: what attaching costs; no records)")
	fs.BoolVar(&l.Stats, "bpf-stats", false, "measure the kernel-side run time of the BPF programs")
	fs.DurationVar(&l.Alternate, "alternate", 0, "overhead measurement: detach and attach the collector every `PERIOD` (bpf collector); windows go to -alternate-log")
	fs.StringVar(&l.AlternateLog, "alternate-log", "", "file for the windows of -alternate: lines \"on|off START END\" in Unix ns")
	fs.StringVar(&l.Hosts.Serve, "serve", "", "target host of two: record the target's events and serve them to the initiator's dpperf on `ADDR:PORT` (needs -token-file)")
	fs.StringVar(&l.Hosts.Peer, "peer", "", "initiator host of two: fetch the target's events from the dpperf serving on `HOST:PORT` and join them (needs -token-file; -interval fetches every interval)")
	tokenFile := fs.String("token-file", "", "`FILE` holding the token both hosts share (one word, at least 16 bytes)")
	fs.DurationVar(&l.Hosts.Linger, "serve-linger", 0, "with -serve: keep serving this long after the recording ends, for the initiator's last fetch (default 30s)")
	// Everything after "--" is the command to profile, flags included.
	for i, a := range args {
		if a == "--" {
			args, l.Command = args[:i], args[i+1:]
			break
		}
	}
	rest, err := pf.parse(args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return fail.Usagef("profile run: unexpected argument %q (put the command after --)", rest[0])
	}
	if l.Setup, err = pf.tf.load(); err != nil {
		return err
	}
	if l.Hosts.Serve != "" || l.Hosts.Peer != "" {
		if *tokenFile == "" {
			return fail.Usagef("profile run: -serve and -peer need -token-file")
		}
		if l.Hosts.Token, err = profiling.ReadToken(*tokenFile); err != nil {
			return err
		}
	}
	if l.Collector, err = collect.ParseKind(*collector); err != nil {
		return fail.Usagef("-collector: %v", err)
	}
	l.Notes, l.Quiet, l.OnInterval = stderr, pf.out.quiet, intervalReport(stdout, "avg", "p50", "p99", "max")
	setStopGrace(ctx, l.StopGrace())
	res, err := l.Run(ctx)
	if err != nil {
		return err
	}
	if err := emit(res.Profile, l.Task, &pf.out, stdout); err != nil {
		return err
	}
	if res.CommandErr != nil {
		return fmt.Errorf("profile run: %s: %w", l.Command[0], res.CommandErr)
	}
	if res.Interrupted {
		return fmt.Errorf("profile run: %s cut short, profile written: %w", l.Command[0], context.Canceled)
	}
	return nil
}
