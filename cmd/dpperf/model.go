package main

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/dpperf/dpperf/internal/fail"
)

// modelCommands are the subcommands of `dpperf model`.
var modelCommands = map[string]struct {
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}{
	"estimate": {"throughput, bottleneck, headroom and latency of a specification", runModelEstimate},
	"simulate": {"discrete-event simulation: throughput, mean and tail latency, drops", runModelSimulate},
	"compare":  {"model against simulation, with relative errors", runModelCompare},
	"sweep":    {"vary one parameter: tables and PNG/SVG plots", runModelSweep},
	"optimize": {"best configuration under an objective and constraints", runModelOptimize},
	"fit":      {"fit a stage's throughput, parallelism, queue and overhead to a measured latency curve", runModelFit},
}

func runModel(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "-help" {
		w := stdout
		if len(args) == 0 {
			w = stderr
		}
		fmt.Fprintln(w, "Usage: dpperf model <command> [flags] spec.yaml")
		fmt.Fprintln(w, "\nCommands:")
		names := make([]string, 0, len(modelCommands))
		for n := range modelCommands {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			fmt.Fprintf(w, "  %-9s %s\n", n, modelCommands[n].summary)
		}
		if len(args) == 0 {
			return fail.Usagef("model: no command given")
		}
		return nil
	}
	c, ok := modelCommands[args[0]]
	if !ok {
		return fail.Usagef("model: unknown command %q", args[0])
	}
	return c.run(ctx, args[1:], stdout, stderr)
}

// oneArg checks that exactly one positional argument was given.
func oneArg(name string, pos []string) (string, error) {
	if len(pos) != 1 {
		return "", fail.Usagef("model %s: want one specification file, got %d arguments (%s)", name, len(pos), strings.Join(pos, " "))
	}
	return pos[0], nil
}
