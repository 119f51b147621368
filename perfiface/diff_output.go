package perfiface

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Percent is a relative change in percent.
type Percent float64

// MarshalJSON writes infinite values as null.
func (p Percent) MarshalJSON() ([]byte, error) {
	if math.IsInf(float64(p), 0) || math.IsNaN(float64(p)) {
		return []byte("null"), nil
	}
	return []byte(trimFloat(float64(p))), nil
}

// String formats a signed percentage.
func (p Percent) String() string {
	switch {
	case math.IsInf(float64(p), 1):
		return "+inf%"
	case math.IsInf(float64(p), -1):
		return "-inf%"
	}
	return fmt.Sprintf("%+.1f%%", float64(p))
}

// WriteText prints the comparison: one block per changed class, then the
// count of unchanged ones and the notes.
func (d *Diff) WriteText(w io.Writer) {
	res := "exact"
	if d.Resolution > 0 {
		res = trimFloat(d.Resolution)
	}
	metric := d.Metric
	if d.Target != "" {
		metric += " under " + d.Target
	}
	fmt.Fprintf(w, "metric %s (%s), resolution %s\n", metric, d.Unit, res)
	for _, s := range []struct {
		name string
		side DiffSide
	}{{"old", d.Old}, {"new", d.New}} {
		fmt.Fprintf(w, "%s: %s: %d paths, %d classes", s.name, s.side.Program, s.side.Paths, s.side.Classes)
		if s.side.NoInput > 0 {
			fmt.Fprintf(w, " (%d without an example)", s.side.NoInput)
		}
		switch {
		case s.side.Coarse && s.side.Bounded > 0:
			fmt.Fprintf(w, ", %d of the paths subtrees left open (coarse first)", s.side.Bounded)
		case s.side.Bounded > 0:
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
		fmt.Fprintf(w, "%9s %9s %9s %8s  %s class %d: %s\n", trimFloat(r.Before), trimFloat(r.After),
			signed(r.Delta), r.Percent, r.From, r.FromClass, classText(r.Class))
		fmt.Fprintf(w, "%39s old class %s, path %s → new class %s, path %s\n", "",
			pathName(r.OldClass), pathName(r.OldPath), pathName(r.NewClass), pathName(r.NewPath))
		if r.BeforeFormula != trimFloat(r.Before) || r.AfterFormula != trimFloat(r.After) {
			fmt.Fprintf(w, "%39s cost %s → %s\n", "", r.BeforeFormula, r.AfterFormula)
		}
		fmt.Fprintf(w, "%39s input: %s\n", "", strings.Join(r.Input, " | "))
		if len(r.State) > 0 {
			fmt.Fprintf(w, "%39s state: %s\n", "", strings.Join(r.State, ", "))
		}
	}
	fmt.Fprintf(w, "\n%d pairs of classes unchanged.\n", d.Unchanged)
	d.writeByConditions(w)
	if len(d.Notes) > 0 {
		fmt.Fprintln(w, "notes:")
		for _, n := range d.Notes {
			fmt.Fprintf(w, "  - %s\n", n)
		}
	}
}

// writeByConditions prints the classes matched by their conditions.
func (d *Diff) writeByConditions(w io.Writer) {
	fmt.Fprintf(w, "\nBy conditions: %d classes have the same conditions in both, %d of them another value; %d appeared, %d went away\n",
		d.SameConditions, len(d.Shifted), len(d.Appeared), len(d.Gone))
	for _, c := range d.Shifted {
		fmt.Fprintf(w, "  %s → %s (%s): old class %d, new class %d: %s\n", c.Old.Value, c.New.Value, signed(c.Delta),
			c.Old.Class, c.New.Class, classText(c.Old.Cond))
	}
	for _, l := range []struct {
		what string
		cs   []DiffClass
	}{{"appeared", d.Appeared}, {"went away", d.Gone}} {
		for _, c := range l.cs {
			fmt.Fprintf(w, "  %s: class %d, %s (%s..%s): %s\n", l.what, c.Class, c.Value, trimFloat(c.Lo), trimFloat(c.Hi), classText(c.Cond))
		}
	}
}

// classText joins a class's conditions.
func classText(conds []string) string {
	if len(conds) == 0 {
		return "every input"
	}
	return andText(conds)
}

// signed formats a change with its sign.
func signed(v float64) string {
	if v > 0 {
		return "+" + trimFloat(v)
	}
	return trimFloat(v)
}

// pathName numbers a class or path; -1 is one the exploration did not
// reach.
func pathName(p int) string {
	if p < 0 {
		return "unexplored"
	}
	return strconv.Itoa(p)
}
