package main

import (
	"bufio"
	"context"
	"io"
	"strings"

	"github.com/dpperf/dpperf/internal/cli"
	"github.com/dpperf/dpperf/internal/fail"
	"github.com/dpperf/dpperf/perfiface"
	"github.com/dpperf/dpperf/smt"
	"github.com/dpperf/dpperf/symex"
)

// runInterfaceDiff is `dpperf interface diff OLD.o NEW.o`: the input
// classes whose cost changed between two builds of a program.
func runInterfaceDiff(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("interface diff", "interface diff [flags] OLD.o NEW.o", stderr)
	f := addIfaceFlags(fs)
	res := fs.Float64("resolution", 0, "compare the classes of the interfaces at resolution `R` (0: exact, every feasible path; default: the finest at which both have at most 30 classes)")
	failAbove := fs.Float64("fail-above", 0, "exit 1 when an input class got more than `PERCENT` costlier")
	out := cli.AddOutput(fs, "docs/interface.md#json")
	asJSON := &out.JSON
	pos, err := cli.Parse(fs, args)
	if err != nil {
		return err
	}
	gate, resSet := cli.IsSet(fs, "fail-above"), cli.IsSet(fs, "resolution")
	if len(pos) != 2 {
		return cli.UsageError(fs, "want two object files (old, new), got %d arguments", len(pos))
	}
	if *res < 0 {
		return fail.Usagef("interface diff: --resolution must not be negative")
	}
	// --time-limit holds for the whole comparison: each program's
	// exploration gets a third of it, the examples what is left.
	cctx, cancel := limitRun(ctx, f.timeLimit)
	defer cancel()
	f.timeLimit /= 3
	// Both programs are explored coarse first, unless every path is asked
	// for (--resolution 0) or a depth bound is given.
	if f.maxDepth == 0 && (!resSet || *res > 0) {
		f.coarse = &perfiface.RefineOptions{Resolution: *res, Classes: perfiface.DefaultClasses}
	}
	var its [2]*perfiface.Interface
	for i, path := range pos {
		if its[i], err = f.analyse(cctx, path, stderr); err != nil {
			return err
		}
	}
	r := *res
	if f.coarse != nil {
		// One resolution for both: the finest at which both have at most
		// DefaultClasses classes, or the one asked for, and never below
		// what either exploration reached.
		for _, it := range its {
			if !resSet {
				r = max(r, it.Choose(perfiface.DefaultClasses))
			}
			if r <= it.Floor() {
				r = it.Above(it.Floor())
			}
		}
	}
	d, err := perfiface.Compare(cctx, its[0], its[1], perfiface.DiffOptions{Resolution: r,
		Check: symex.Options{Solver: smt.Config{Command: strings.Fields(f.solver), Timeout: f.timeout}}})
	if err != nil {
		return err
	}
	err = out.Write(stdout, func(dst io.Writer) error {
		w := bufio.NewWriter(dst)
		var err error
		if *asJSON {
			err = cli.WriteJSON(w, d)
		} else {
			d.WriteText(w)
		}
		if ferr := w.Flush(); err == nil {
			err = ferr
		}
		return err
	})
	if err != nil {
		return err
	}
	if gate {
		if bad := d.Regressions(*failAbove); len(bad) > 0 {
			return fail.Requirementf("interface diff: %d input classes cost more than %s%% more (largest %s, %s → %s %s)",
				len(bad), trimNum(*failAbove), bad[0].Percent, trimNum(bad[0].Before), trimNum(bad[0].After), d.Unit)
		}
	}
	return ctx.Err()
}
