package main

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/dpperf/dpperf/internal/fail"
)

// command is one subcommand of dpperf.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

// commands lists the subcommands in the order help shows them.
func commands() []command {
	return []command{
		{"bound", "worst-case throughput guarantee of an eBPF/XDP program on a target", runBound},
		{"programs", "list the programs of a BPF object: section, type, instructions, maps", runPrograms},
		{"targets", "list the cost-model targets for bound", runTargets},
		{"interface", "performance interface of an eBPF/XDP program: cost per input class", runInterface},
		{"model", "analytical model of SmartNIC/offload pipelines", runModel},
		{"record", "record traces (CTF, pcapng, kernel tracepoints) and analyze them", runRecord},
		{"trace", "analyze a recording: checkpoints, RPC round trips, thread states, queue fill", runTrace},
		{"profile", "per-request latency breakdown along kernel I/O paths", runProfile},
		{"version", "print the version", runVersion},
		{"help", "show help for dpperf or a subcommand", runHelp},
	}
}

// run is the whole program behind main: it parses args, dispatches to a
// subcommand and returns its error. Exit codes come from fail.ExitCode.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		usage(stderr)
		return fail.Usagef("no subcommand given")
	}
	name := args[0]
	switch name {
	case "-h", "--help", "-help":
		usage(stdout)
		return nil
	case "--version", "-version", "-V":
		return runVersion(ctx, nil, stdout, stderr)
	}
	for _, c := range commands() {
		if c.name == name {
			return c.run(ctx, args[1:], stdout, stderr)
		}
	}
	return fail.Usagef("unknown subcommand %q (see 'dpperf help')", name)
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "dpperf: performance engineering of network data planes and I/O paths")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Usage: dpperf <command> [flags] [arguments]")
	fmt.Fprintln(w, "       dpperf --version")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Commands:")
	cs := commands()
	width := 0
	for _, c := range cs {
		width = max(width, len(c.name))
	}
	for _, c := range cs {
		fmt.Fprintf(w, "  %-*s  %s\n", width, c.name, c.summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run 'dpperf <command> -h' for the flags of a command.")
	fmt.Fprintln(w, "Exit codes:")
	fmt.Fprintln(w, "  0    ok")
	fmt.Fprintln(w, "  1    a --require or --fail-above check failed")
	fmt.Fprintln(w, "  2    bad usage or input (a one-line error names the flag or file)")
	fmt.Fprintln(w, "  3    other failure")
	fmt.Fprintln(w, "  4    the result was printed, but a part that needs root (bound --measure) was not done")
	fmt.Fprintln(w, "  130  interrupted (Ctrl-C); partial output is valid and marked as such")
}

func runHelp(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		usage(stdout)
		return nil
	}
	for _, c := range commands() {
		if c.name == args[0] && c.name != "help" {
			return c.run(ctx, []string{"-h"}, stdout, stderr)
		}
	}
	names := []string{}
	for _, c := range commands() {
		names = append(names, c.name)
	}
	sort.Strings(names)
	return fail.Usagef("unknown command %q; commands: %s", args[0], strings.Join(names, ", "))
}
