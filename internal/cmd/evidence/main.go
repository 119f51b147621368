// Command evidence holds dpperf's throughput bounds against the kernel:
// for every program it computes the bound under a calibrated target and
// replays the bound's example packet with BPF_PROG_TEST_RUN (dpperf bound
// --measure), several times, interleaved, and writes a dated report
// (markdown and JSON) of the bound, the measured rates, their ratio and
// the machine. It exits 1 when a guarantee is violated: a program whose
// median replay runs below its bound. `make evidence` runs it on an
// otherwise idle machine; `make test` never does, since it reads clocks.
//
// Usage: evidence [-bin bin/dpperf] [-target host] [-reps 5] [-out DIR] OBJECT[:PROGRAM]...
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	switch err {
	case nil:
	case errViolated:
		fmt.Fprintln(os.Stderr, "evidence:", err)
		os.Exit(1)
	default:
		fmt.Fprintln(os.Stderr, "evidence:", err)
		os.Exit(2)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("evidence", flag.ContinueOnError)
	fs.SetOutput(stderr)
	bin := fs.String("bin", "bin/dpperf", "the dpperf binary")
	tgt := fs.String("target", "host", "the target the bounds are computed on")
	reps := fs.Int("reps", 5, "replays of every example, interleaved across programs")
	out := fs.String("out", "docs/evidence", "folder of the reports")
	checks := fs.Int("max-checks", 20000, "end a search after this many paths (an intermediate bound has no example to replay)")
	recal := fs.Bool("calibrate", true, "with -target host, calibrate this machine first (dpperf targets calibrate --host), so that the bounds and the replays meet the same machine")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() == 0 || *reps < 1 || *checks < 1 {
		return fmt.Errorf("want -reps ≥ 1, -max-checks ≥ 1 and at least one OBJECT[:PROGRAM]")
	}
	progs := parsePrograms(fs.Args())
	rep := &Report{Target: *tgt, Reps: *reps, Machine: thisMachine(), Pricing: loadPricing(*tgt)}
	rep.Date = time.Now().UTC().Format(time.RFC3339)
	runner := &runner{bin: *bin, target: *tgt, maxChecks: *checks}
	if *recal && *tgt == "host" {
		fmt.Fprintln(stderr, "calibrating this machine (dpperf targets calibrate --host)")
		if err := runner.calibrate(ctx); err != nil {
			return err
		}
	}
	rows := make([]*Row, len(progs))
	for i, p := range progs {
		rows[i] = &Row{Program: p.name(), Object: p.object}
	}
	for r := 1; r <= *reps; r++ {
		for i, p := range progs {
			fmt.Fprintf(stderr, "\rreplay %d/%d: %-40s", r, *reps, p.name())
			if err := runner.once(ctx, p, rows[i]); err != nil {
				fmt.Fprintln(stderr)
				return fmt.Errorf("%s: %w", p.name(), err)
			}
		}
	}
	fmt.Fprintln(stderr)
	rep.Rows = rows
	rep.Machine.LoadEnd = loadavg()
	rep.summarize()
	if err := rep.writeFiles(*out); err != nil {
		return err
	}
	if err := rep.writeMarkdown(stdout); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "wrote %s.{md,json}\n", filepath.Join(*out, rep.base()))
	if rep.Violations > 0 {
		return errViolated
	}
	return nil
}

var errViolated = fmt.Errorf("a guarantee was violated: a path's median replay ran below its predicted rate")
