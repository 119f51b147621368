package perfiface

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/dpperf/dpperf/bound"
	"github.com/dpperf/dpperf/internal/fail"
	"github.com/dpperf/dpperf/symex"
)

// DiffOptions configure Diff.
type DiffOptions struct {
	// Resolution is the resolution of the views whose leaves are the
	// classes (0: exact).
	Resolution float64
	// Check configures the solvers that find the example inputs.
	Check symex.Options
	// Tries is how many paths of a class are asked for an example before
	// the class is given up (default 3).
	Tries int
}

// Diff is the comparison of two programs' interfaces class by class: each
// class of either program gives an example input, which both programs run.
type Diff struct {
	Metric     string    `json:"metric"`
	Unit       string    `json:"unit"`
	Target     string    `json:"target,omitempty"`
	Resolution float64   `json:"resolution"`
	Old        DiffSide  `json:"old"`
	New        DiffSide  `json:"new"`
	Examples   int       `json:"examples"`  // example inputs run through both programs
	Matched    int       `json:"matched"`   // distinct (old class, new class) pairs they met
	Unchanged  int       `json:"unchanged"` // of which the cost did not change
	Rows       []DiffRow `json:"rows"`      // the pairs whose cost changed, largest regression first
	// The classes matched by their conditions (the same tests, as
	// written, lead to them): Shifted are those whose value changed,
	// Appeared the new program's classes no old class has the conditions
	// of, Gone the old program's that no new class has.
	SameConditions int          `json:"same_conditions"`
	Shifted        []ClassShift `json:"shifted"`
	Appeared       []DiffClass  `json:"appeared"`
	Gone           []DiffClass  `json:"gone"`
	Notes          []string     `json:"notes"`
}

// DiffClass is one class of a view: its number, its conditions and the
// range of its paths' costs.
type DiffClass struct {
	Class int      `json:"class"`
	Cond  []string `json:"cond"`
	Value string   `json:"value"`
	Lo    float64  `json:"lo"`
	Hi    float64  `json:"hi"`
}

// ClassShift is a class with the same conditions in both programs whose
// value changed by Delta.
type ClassShift struct {
	Old   DiffClass `json:"old"`
	New   DiffClass `json:"new"`
	Delta float64   `json:"delta"`
}

// DiffSide describes one of the programs compared.
type DiffSide struct {
	Program string `json:"program"`
	Paths   int    `json:"paths"`
	Classes int    `json:"classes"`
	NoInput int    `json:"no_input"` // classes the solver gave no example for
	Partial bool   `json:"partial,omitempty"`
	// Bounded paths are subtrees not explored below MaxDepth decisions;
	// an example in one is priced along its own way.
	Bounded  int `json:"bounded,omitempty"`
	MaxDepth int `json:"max_depth,omitempty"`
	// Coarse: explored coarse first (Refine), its bounded paths are the
	// subtrees it left open.
	Coarse bool `json:"coarse,omitempty"`
}

// DiffRow is one input class whose cost changed: the inputs that fall in
// OldClass of the old program and NewClass of the new one, represented by
// an example.
type DiffRow struct {
	// From is the program ("old" or "new") whose class gave the example;
	// Class is that class's conditions, readable where the solver's terms
	// allow.
	From      string   `json:"from"`
	FromClass int      `json:"from_class"`
	Class     []string `json:"class"`
	// OldClass and NewClass number the leaves of each view in the order
	// the Python form lists them (-1: the run took a path the exploration
	// did not reach); OldPath and NewPath are the paths the example took.
	OldClass int `json:"old_class"`
	NewClass int `json:"new_class"`
	OldPath  int `json:"old_path"`
	NewPath  int `json:"new_path"`
	// Input is the example: the packet decoded layer by layer, its bytes,
	// and the map contents it met.
	Input  []string `json:"input"`
	Packet string   `json:"packet"`
	State  []string `json:"state,omitempty"`
	// Before and After are the costs of the example in each program: the
	// path's formula evaluated with the PCVs of the run.
	Before        float64 `json:"before"`
	After         float64 `json:"after"`
	BeforeFormula string  `json:"before_formula"`
	AfterFormula  string  `json:"after_formula"`
	Delta         float64 `json:"delta"`
	// Percent is Delta relative to Before; ±Inf (null in JSON) when Before
	// is 0.
	Percent Percent `json:"percent"`
}

// Regressions returns the rows whose cost rose by more than percent.
func (d *Diff) Regressions(percent float64) []DiffRow {
	var out []DiffRow
	for _, r := range d.Rows {
		if r.Delta > 0 && float64(r.Percent) > percent {
			out = append(out, r)
		}
	}
	return out
}

// Compare compares the interfaces of two programs for the same metric by
// input class. The classes of both programs are the leaves of their views
// at the resolution; for each, the solver gives an example input (packet
// and map contents) on one of its paths, and the interpreter runs every
// example through both programs from their objects' initial state with
// the example's map entries filled in (entries of maps the other program
// lacks are dropped, with a note). The cost of an example in a program is
// the formula of the path it took, evaluated with the PCVs of the run.
// Examples that meet the same pair of classes are one row: the one with
// the larger change.
func Compare(ctx context.Context, before, after *Interface, opts DiffOptions) (*Diff, error) {
	if before.Metric != after.Metric || before.Target != after.Target {
		return nil, fmt.Errorf("diff: the interfaces have different metrics (%s %s, %s %s)",
			before.Metric, before.Target, after.Metric, after.Target)
	}
	if before.meas == nil || after.meas == nil {
		return nil, fmt.Errorf("diff: interfaces must come from Build")
	}
	res := max(opts.Resolution, 1e-9)
	sides := []*diffSide{{name: "old", it: before}, {name: "new", it: after}}
	d := &Diff{Metric: before.Metric, Unit: before.Unit, Target: before.Target, Resolution: opts.Resolution}
	notes := map[string]bool{}
	for _, s := range sides {
		if err := s.setup(res); err != nil {
			return nil, err
		}
		if s.it.Partial {
			notes[fmt.Sprintf("the %s program's exploration stopped early: its missing classes gave no examples", s.name)] = true
		}
	}
	// The two programs' solvers run side by side.
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, s := range sides {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = fail.Guard(func() error { return s.examples(ctx, opts) })
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	rows := map[[2]int]*DiffRow{}
	var order [][2]int
	for _, s := range sides {
		for _, e := range s.exs {
			r, ok := d.compare(sides, s, e, notes)
			if !ok {
				continue
			}
			d.Examples++
			k := [2]int{r.OldClass, r.NewClass}
			prev, seen := rows[k]
			if !seen {
				order = append(order, k)
			}
			if !seen || math.Abs(r.Delta) > math.Abs(prev.Delta) {
				rows[k] = r
			}
		}
	}
	d.Matched = len(order)
	for _, k := range order {
		r := rows[k]
		if r.Delta == 0 {
			d.Unchanged++
			continue
		}
		d.Rows = append(d.Rows, *r)
	}
	sort.SliceStable(d.Rows, func(i, j int) bool {
		a, b := d.Rows[i], d.Rows[j]
		if a.Percent != b.Percent {
			return a.Percent > b.Percent
		}
		return a.Delta > b.Delta
	})
	if d.Rows == nil {
		d.Rows = []DiffRow{}
	}
	d.byConditions(sides[0], sides[1])
	d.Old, d.New = sides[0].summary(), sides[1].summary()
	for _, s := range sides {
		for _, n := range s.notes {
			notes[n] = true
		}
	}
	d.Notes = []string{}
	for n := range notes {
		d.Notes = append(d.Notes, n)
	}
	slices.Sort(d.Notes)
	return d, nil
}

// byConditions matches the classes of the two views by their conditions
// as written.
func (d *Diff) byConditions(old, nu *diffSide) {
	class := func(s *diffSide, i int) DiffClass {
		c := DiffClass{Class: i, Cond: s.conds[i]}
		if i < len(s.leafs) {
			v := s.leafs[i]
			c.Value, c.Lo, c.Hi = v.Value.String(), v.Lo, v.Hi
		}
		return c
	}
	key := func(conds []string) string { return strings.Join(conds, "\x00") }
	olds := map[string]int{}
	for i, c := range old.conds {
		olds[key(c)] = i
	}
	matched := map[int]bool{}
	d.Shifted, d.Appeared, d.Gone = []ClassShift{}, []DiffClass{}, []DiffClass{}
	for i, c := range nu.conds {
		j, ok := olds[key(c)]
		if !ok {
			d.Appeared = append(d.Appeared, class(nu, i))
			continue
		}
		matched[j] = true
		d.SameConditions++
		o, n := class(old, j), class(nu, i)
		if o.Value != n.Value && j < len(old.leafs) && i < len(nu.leafs) {
			delta := nu.leafs[i].s.mid().Const - old.leafs[j].s.mid().Const
			d.Shifted = append(d.Shifted, ClassShift{Old: o, New: n, Delta: delta})
		}
	}
	for j := range old.conds {
		if !matched[j] {
			d.Gone = append(d.Gone, class(old, j))
		}
	}
	sort.SliceStable(d.Shifted, func(i, j int) bool { return d.Shifted[i].Delta > d.Shifted[j].Delta })
}

// compare runs an example of side from through both programs.
func (d *Diff) compare(sides []*diffSide, from *diffSide, e diffExample, notes map[string]bool) (*DiffRow, bool) {
	var runs [2]diffRun
	for i, s := range sides {
		r, err := s.run(e.ex, from, notes)
		if err != nil {
			notes[fmt.Sprintf("%s class %d: the example does not run in the %s program: %v", from.name, e.class, s.name, err)] = true
			return nil, false
		}
		runs[i] = r
	}
	class := e.class
	if got := runs[slices.Index(sides, from)]; got.path != e.path {
		// The solver's example does not take its path in the interpreter
		// (see symex's notes): the row is the class the input really
		// falls in.
		notes[fmt.Sprintf("%s class %d: the example of path %d took path %s in the interpreter%s",
			from.name, e.class, e.path, pathName(got.path), conflict(e.ex))] = true
		class = got.class
	}
	conds := []string{"(a path the exploration did not reach)"}
	if class >= 0 {
		conds = from.conds[class]
	}
	r := &DiffRow{From: from.name, FromClass: class, Class: conds, OldClass: runs[0].class, NewClass: runs[1].class,
		OldPath: runs[0].path, NewPath: runs[1].path, Input: bound.Decode(e.ex.Packet), Packet: symex.Hex(e.ex.Packet),
		State: describeState(e.ex), Before: runs[0].cost, After: runs[1].cost,
		BeforeFormula: runs[0].formula.String(), AfterFormula: runs[1].formula.String()}
	r.Delta = r.After - r.Before
	switch {
	case r.Before != 0:
		r.Percent = Percent(100 * r.Delta / r.Before)
	case r.Delta != 0:
		r.Percent = Percent(math.Inf(int(math.Copysign(1, r.Delta))))
	}
	return r, true
}
