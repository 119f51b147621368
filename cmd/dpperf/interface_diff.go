package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/dpperf/dpperf/internal/fail"
	"github.com/dpperf/dpperf/perfiface"
	"github.com/dpperf/dpperf/smt"
	"github.com/dpperf/dpperf/symex"
)

// runInterfaceDiff is `dpperf interface diff OLD.o NEW.o`: the input
// classes whose cost changed between two builds of a program.
func runInterfaceDiff(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("interface diff", "interface diff [flags] OLD.o NEW.o", stderr)
	f := addIfaceFlags(fs)
	res := fs.Float64("resolution", 0, "compare the classes of the interfaces at resolution `R` (0: exact)")
	failAbove := fs.Float64("fail-above", 0, "exit 1 when an input class got more than `PERCENT` costlier")
	out := addOutputFlags(fs, "docs/interface.md#json")
	asJSON := &out.json
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	gate := false
	fs.Visit(func(fl *flag.Flag) { gate = gate || fl.Name == "fail-above" })
	if len(pos) != 2 {
		return usageError(fs, "want two object files (old, new), got %d arguments", len(pos))
	}
	if *res < 0 {
		return fail.Usagef("interface diff: --resolution must not be negative")
	}
	// --time-limit holds for the whole comparison: each program's
	// exploration gets a third of it, the examples what is left.
	cctx, cancel := limitRun(ctx, f.timeLimit)
	defer cancel()
	f.timeLimit /= 3
	var its [2]*perfiface.Interface
	for i, path := range pos {
		if its[i], err = f.analyse(cctx, path, stderr); err != nil {
			return err
		}
	}
	d, err := perfiface.Compare(cctx, its[0], its[1], perfiface.DiffOptions{Resolution: *res,
		Check: symex.Options{Solver: smt.Config{Command: strings.Fields(f.solver), Timeout: f.timeout}}})
	if err != nil {
		return err
	}
	err = out.write(stdout, func(dst io.Writer) error {
		w := bufio.NewWriter(dst)
		var err error
		if *asJSON {
			err = writeJSON(w, d)
		} else {
			writeDiff(w, d)
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

// writeDiff prints a comparison: one block per changed class, then the
// count of unchanged ones and the notes.
func writeDiff(w io.Writer, d *perfiface.Diff) {
	res := "exact"
	if d.Resolution > 0 {
		res = trimNum(d.Resolution)
	}
	metric := d.Metric
	if d.Target != "" {
		metric += " under " + d.Target
	}
	fmt.Fprintf(w, "metric %s (%s), resolution %s\n", metric, d.Unit, res)
	for _, s := range []struct {
		name string
		side perfiface.DiffSide
	}{{"old", d.Old}, {"new", d.New}} {
		fmt.Fprintf(w, "%s: %s: %d paths, %d classes", s.name, s.side.Program, s.side.Paths, s.side.Classes)
		if s.side.NoInput > 0 {
			fmt.Fprintf(w, " (%d without an example)", s.side.NoInput)
		}
		if s.side.Bounded > 0 {
			fmt.Fprintf(w, ", %d of the paths subtrees below %d decisions not explored", s.side.Bounded, s.side.MaxDepth)
		}
		if s.side.Partial {
			fmt.Fprint(w, ", PARTIAL")
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "%d example inputs met %d pairs of classes (old, new); %d changed\n", d.Examples, d.Matched, len(d.Rows))
	if len(d.Rows) > 0 {
		fmt.Fprintf(w, "\n%9s %9s %9s %8s  class\n", "before", "after", "delta", "percent")
	}
	for _, r := range d.Rows {
		fmt.Fprintf(w, "%9s %9s %9s %8s  %s class %d: %s\n", trimNum(r.Before), trimNum(r.After),
			signed(r.Delta), r.Percent, r.From, r.FromClass, classText(r.Class))
		fmt.Fprintf(w, "%39s old class %s, path %s → new class %s, path %s\n", "", num(r.OldClass), num(r.OldPath), num(r.NewClass), num(r.NewPath))
		if r.BeforeFormula != trimNum(r.Before) || r.AfterFormula != trimNum(r.After) {
			fmt.Fprintf(w, "%39s cost %s → %s\n", "", r.BeforeFormula, r.AfterFormula)
		}
		fmt.Fprintf(w, "%39s input: %s\n", "", strings.Join(r.Input, " | "))
		if len(r.State) > 0 {
			fmt.Fprintf(w, "%39s state: %s\n", "", strings.Join(r.State, ", "))
		}
	}
	fmt.Fprintf(w, "\n%d pairs of classes unchanged.\n", d.Unchanged)
	if len(d.Notes) > 0 {
		fmt.Fprintln(w, "notes:")
		for _, n := range d.Notes {
			fmt.Fprintf(w, "  - %s\n", n)
		}
	}
}

func classText(conds []string) string {
	if len(conds) == 0 {
		return "every input"
	}
	return strings.Join(conds, " and ")
}

func signed(v float64) string {
	if v > 0 {
		return "+" + trimNum(v)
	}
	return trimNum(v)
}

func num(i int) string {
	if i < 0 {
		return "unexplored"
	}
	return fmt.Sprint(i)
}
