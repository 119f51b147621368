package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/dpperf/dpperf/cfg"
	"github.com/dpperf/dpperf/internal/atomicfile"
	"github.com/dpperf/dpperf/internal/cli"
	"github.com/dpperf/dpperf/internal/fail"
	"github.com/dpperf/dpperf/perfiface"
	"github.com/dpperf/dpperf/smt"
	"github.com/dpperf/dpperf/symex"
	"github.com/dpperf/dpperf/target"
)

// ifaceFlags are the flags every interface subcommand shares: what to
// analyse and how.
type ifaceFlags struct {
	progName                  *string
	progType                  *progType
	tgt, metric, solver       string
	unroll, workers, maxPaths int
	maxDepth                  int
	lb                        loopBounds
	timeout, timeLimit        time.Duration
	wellFormed                bool
	// coarse, when set, explores coarse first (perfiface.Refine) instead
	// of every feasible path.
	coarse *perfiface.RefineOptions
}

func addIfaceFlags(fs *flag.FlagSet) *ifaceFlags {
	f := &ifaceFlags{lb: loopBounds{}}
	f.progName, f.progType = addProgramFlags(fs)
	fs.StringVar(&f.metric, "metric", "insns", "`METRIC`: insns (BPF instructions, exact), mem (memory accesses) or cost (under --target)")
	fs.StringVar(&f.tgt, "target", hostTarget, "target `NAME` or file that prices --metric cost (default: this machine, calibrated on first use)")
	fs.IntVar(&f.unroll, "unroll", 0, "bound loops whose trip count cannot be proven to `N` iterations")
	fs.Var(f.lb, "loop-bound", "bound one loop: `LOC=N` (prog.c:42 or insn:INDEX); repeatable")
	fs.IntVar(&f.workers, "workers", 0, "solver processes exploring in parallel (0: one per CPU)")
	fs.StringVar(&f.solver, "solver", "z3 -in -smt2", "SMT-LIB2 solver `COMMAND`")
	fs.DurationVar(&f.timeout, "solver-timeout", 2*time.Second, "per-query solver `TIMEOUT`; an undecided branch is kept as possibly feasible")
	fs.IntVar(&f.maxPaths, "max-paths", 100000, "stop after `N` feasible paths")
	fs.IntVar(&f.maxDepth, "max-depth", 0, "explore at most `N` decisions along a path; deeper subtrees become classes bounded by the cheapest and dearest ways through them (0: no bound)")
	fs.DurationVar(&f.timeLimit, "time-limit", 0, "stop exploring after `DURATION`")
	fs.BoolVar(&f.wellFormed, "well-formed", false, "only packets with valid headers (IPv4 ihl >= 5, lengths consistent; see docs/bound.md)")
	return f
}

// analyse loads, explores and prices one object.
func (f *ifaceFlags) analyse(ctx context.Context, path string, stderr io.Writer) (*perfiface.Interface, error) {
	prog, err := loadPacketProgram(path, "interface", f.progName, f.progType)
	if err != nil {
		return nil, err
	}
	// Only --metric cost is priced by a target; the others count.
	var t *target.Target
	if f.metric == "cost" {
		if t, err = loadTarget(ctx, f.tgt, stderr); err != nil {
			return nil, err
		}
	}
	// The time limit holds from here: graph and exploration.
	ectx, cancel := limitRun(ctx, f.timeLimit)
	defer cancel()
	g, err := cfg.BuildContext(ectx, prog, cfg.Options{Unroll: f.unroll, LoopBounds: f.lb})
	if err != nil {
		return nil, stoppedEarly(ctx, err, f.timeLimit)
	}
	workers := f.workers
	if workers <= 0 {
		workers = runtime.NumCPU()
	}
	if f.maxDepth < 0 {
		return nil, fail.Usagef("interface: --max-depth must not be negative")
	}
	opts := perfiface.ExploreOptions{Workers: workers, MaxPaths: f.maxPaths, MaxDepth: f.maxDepth,
		Check: symex.Options{Solver: smt.Config{Command: strings.Fields(f.solver), Timeout: f.timeout}, WellFormed: f.wellFormed}}
	if cli.IsTerminal(stderr) {
		opts.Progress = func(p perfiface.Progress) {
			fmt.Fprintf(stderr, "\r%s: %d paths (%d undecided, %d bounded), %d branches refuted, %d checks, %.1fs   ",
				prog.Name, p.Paths, p.Unknown, p.Bounded, p.Infeasible, p.Checks, p.Elapsed.Seconds())
		}
		if f.coarse != nil {
			opts.Progress = func(p perfiface.Progress) {
				res := "-"
				if p.Classes > 0 {
					res = trimNum(p.Resolution)
				}
				fmt.Fprintf(stderr, "\r\033[K%s: %d classes at resolution %s; %d paths and %d open subtrees checked, %d checks, %.1fs",
					prog.Name, p.Classes, res, p.Paths, p.Bounded, p.Checks, p.Elapsed.Seconds())
			}
		}
	}
	var ex *perfiface.Exploration
	if f.coarse != nil {
		ro := *f.coarse
		ro.ExploreOptions, ro.Metric, ro.Target = opts, f.metric, t
		ex, err = perfiface.Refine(ectx, g, ro)
	} else {
		ex, err = perfiface.Explore(ectx, g, opts)
	}
	if opts.Progress != nil {
		fmt.Fprint(stderr, "\r\033[K")
	}
	if err != nil {
		return nil, err
	}
	return perfiface.Build(ex, f.metric, t, path+" ("+prog.Name+")")
}

func runInterface(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if os.Getenv("GOGC") == "" {
		// An exploration's heap is small and churns (symbolic states,
		// evaluations): collecting at 5x the live heap rather than 2x
		// saves about a tenth of the time of Katran's exact interface
		// (12.9 s against 14.8 s, 140 MB against 88 MB at peak).
		defer debug.SetGCPercent(debug.SetGCPercent(400))
	}
	if len(args) > 0 && args[0] == "diff" {
		return runInterfaceDiff(ctx, args[1:], stdout, stderr)
	}
	fs := cli.NewFlagSet("interface", "interface [flags] OBJECT.o", stderr)
	f := addIfaceFlags(fs)
	res := fs.Float64("resolution", 0, "print the interface at resolution `R` (in the metric's unit; 0: exact, every feasible path; default: the finest with at most --classes classes)")
	classes := fs.Int("classes", perfiface.DefaultClasses, "without --resolution, aim at `N` classes")
	thresholds := fs.Bool("thresholds", false, "list the resolution thresholds with the interface size at each")
	out := cli.AddOutput(fs, "perfiface/json.md")
	asJSON := &out.JSON
	dot := fs.String("dot", "", "also write the decision tree as Graphviz to `FILE`")
	module := fs.Bool("module", false, "write the interface as a Python module that runs on a capture (python3 FILE.py capture.pcap [--maps state.json]); the default with -o FILE.py")
	pprofOut := fs.String("pprof", "", "also write the classes' costs as a pprof profile to `FILE` (each class over its tests; weighted by packets with --trace)")
	tr := addTraceFlags(fs)
	pos, err := cli.Parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return cli.UsageError(fs, "want one object file, got %d arguments", len(pos))
	}
	if *res < 0 {
		return fail.Usagef("interface: --resolution must not be negative")
	}
	if *classes < 1 {
		return fail.Usagef("interface: --classes must be at least 1")
	}
	resSet := cli.IsSet(fs, "resolution")
	// Coarse first, unless every path is asked for: exact resolution,
	// a depth bound, or a trace (whose packets need their exact paths).
	if !tr.active() && f.maxDepth == 0 && (!resSet || *res > 0) {
		f.coarse = &perfiface.RefineOptions{Resolution: *res, Classes: *classes}
	}
	it, err := f.analyse(ctx, pos[0], stderr)
	if err != nil {
		return err
	}
	if tr.active() {
		tr.pprof = *pprofOut
		return out.Write(stdout, func(w io.Writer) error { return tr.run(ctx, it, *res, *asJSON, w) })
	}
	dst, finish, err := out.Open(stdout)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(dst)
	r, header := max(*res, 1e-9), []string(nil)
	switch {
	case f.coarse != nil && !resSet:
		r = it.Choose(*classes)
	case f.coarse != nil && r <= it.Floor():
		r = it.Above(it.Floor()) // stopped before the resolution asked for
	}
	view := it.View(r)
	if f.coarse != nil && !resSet {
		view.Chosen = true
		first := fmt.Sprintf("Resolution %s chosen: the finest with at most %d classes (%d here);", trimNum(r), *classes, view.Classes())
		if it.Reached == 0 && (r <= 1e-9 || (it.Metric != perfiface.MetricCost && r <= 1)) {
			first = fmt.Sprintf("Exact resolution chosen: %d classes, within the %d aimed at;", view.Classes(), *classes)
		}
		header = []string{first, "  ask for more with --resolution R, or --resolution 0 for the exact interface (every feasible path)"}
	}
	switch {
	case *asJSON:
		err = it.WriteJSON(w, view, *thresholds)
	case *thresholds:
		err = it.WriteThresholds(w)
	case *module || strings.HasSuffix(out.File, ".py"):
		err = it.Module(w, view, header...)
	default:
		err = it.Python(w, view, header...)
	}
	if err == nil && *pprofOut != "" {
		err = atomicfile.Write(*pprofOut, func(pw io.Writer) error { return it.WriteProfile(pw, view, nil) })
	}
	if err == nil && *dot != "" {
		err = atomicfile.Write(*dot, func(fw io.Writer) error {
			bw := bufio.NewWriter(fw)
			if err := it.Dot(bw, view); err != nil {
				return err
			}
			return bw.Flush()
		})
	}
	if err == nil {
		err = w.Flush()
	}
	if err := finish(err == nil, err); err != nil {
		return err
	}
	return ctx.Err()
}

func trimNum(v float64) string { return strings.TrimSuffix(fmt.Sprintf("%.1f", v), ".0") }
