// One side of an interface diff: a program explored at the shared
// resolution, its example inputs, and the runs of the other side's
// examples on it.

package perfiface

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/dpperf/dpperf/cfg"
	"github.com/dpperf/dpperf/interp"
	"github.com/dpperf/dpperf/mapstate"
	"github.com/dpperf/dpperf/smt"
	"github.com/dpperf/dpperf/symex"
)

// diffSide is one program of a Diff.
type diffSide struct {
	name  string
	it    *Interface
	view  *View
	conds [][]string // per class: the tests that lead to it
	leafs []*VNode   // per class: its leaf
	paths [][]int    // per class: its paths
	class []int      // per path: its class
	exs   []diffExample
	notes []string

	defaults *mapstate.State
	flags    map[string]uint32
	interp   *interp.Interp
	pather   *cfg.Pather
	noInput  int
}

// diffExample is an example input of one class.
type diffExample struct {
	class, path int
	ex          *symex.Example
}

// diffRun is what an example did in one program.
type diffRun struct {
	class, path int
	formula     Formula
	cost        float64
}

func (s *diffSide) setup(res float64) error {
	it := s.it
	s.view = it.View(res)
	s.class = make([]int, len(it.Paths))
	for i := range s.class {
		s.class[i] = -1
	}
	var walk func(v *VNode, conds []string)
	walk = func(v *VNode, conds []string) {
		if v == nil {
			return
		}
		if v.leaf() {
			for _, p := range v.Paths {
				s.class[p] = len(s.paths)
			}
			s.paths = append(s.paths, v.Paths)
			s.conds = append(s.conds, slices.Clone(conds))
			s.leafs = append(s.leafs, v)
			return
		}
		walk(v.Then, append(conds, shortTest(v.Test)))
		walk(v.Else, append(conds, negTest(shortTest(v.Test))))
	}
	walk(s.view.Root, nil)
	if s.view.Root == nil {
		// A truncated exploration has no tree: each path is a class.
		for i := range it.Paths {
			s.class[i] = i
			s.paths = append(s.paths, []int{i})
			s.conds = append(s.conds, []string{"path " + strconv.Itoa(i)})
		}
	}
	prog := it.meas.g.Prog
	var err error
	if s.defaults, err = mapstate.ObjectDefaults(prog); err != nil {
		return err
	}
	if s.flags, err = interp.ObjectMapFlags(prog); err != nil {
		return err
	}
	if s.interp, err = interp.New(prog, interp.Options{}); err != nil {
		return err
	}
	s.pather = cfg.NewPather(it.meas.g)
	return nil
}

func (s *diffSide) summary() DiffSide {
	return DiffSide{Program: s.it.Program, Paths: len(s.it.Paths), Classes: len(s.paths), NoInput: s.noInput, Partial: s.it.Partial,
		Bounded: s.it.Bounded, MaxDepth: s.it.MaxDepth, Coarse: s.it.Coarse}
}

// examples asks the solver for one input per class.
func (s *diffSide) examples(ctx context.Context, opts DiffOptions) error {
	tries := opts.Tries
	if tries <= 0 {
		tries = 3
	}
	check := opts.Check
	if check.MinPacket == 0 {
		check.MinPacket = MinPacket // the inputs the exploration covers
	}
	c, err := symex.NewChecker(s.it.meas.g, check)
	if err != nil {
		return err
	}
	defer c.Close()
	for class, paths := range s.paths {
		var ex *symex.Example
		path := -1
		for _, p := range paths[:min(len(paths), tries)] {
			out, err := c.Check(ctx, s.it.Paths[p].Edges)
			if err != nil {
				if ctx.Err() != nil {
					break
				}
				return err
			}
			if out.Result != smt.Sat {
				continue
			}
			if ex, err = c.Example(ctx); err != nil {
				if ctx.Err() != nil {
					break
				}
				return err
			}
			if ex != nil {
				path = p
				break
			}
		}
		if ex == nil {
			if ctx.Err() != nil {
				// Out of time: the remaining classes go without examples.
				s.noInput += len(s.paths) - class
				s.notes = append(s.notes, fmt.Sprintf("the %s program's classes from %d on got no examples: time limit", s.name, class))
				return nil
			}
			s.noInput++
			s.notes = append(s.notes, fmt.Sprintf("%s class %d (%s): the solver gave no example", s.name, class, andText(s.conds[class])))
			continue
		}
		s.exs = append(s.exs, diffExample{class: class, path: path, ex: ex})
	}
	return nil
}

// run runs an example of side from in s's program.
func (s *diffSide) run(ex *symex.Example, from *diffSide, notes map[string]bool) (diffRun, error) {
	prog := s.it.meas.g.Prog
	st := s.defaults.Clone()
	for _, e := range ex.Maps {
		if e.Absent {
			continue
		}
		pm := prog.Maps[e.Map]
		key := e.Key
		if e.Global {
			key = make([]byte, 4)
		}
		switch {
		case pm == nil:
			notes[fmt.Sprintf("the %s program has no map %s: entries of %s examples in it are dropped", s.name, e.Map, from.name)] = true
			continue
		case int(pm.KeySize) != len(key) || int(pm.ValueSize) != len(e.Value):
			notes[fmt.Sprintf("map %s has another key or value size in the %s program: entries of %s examples in it are dropped", e.Map, s.name, from.name)] = true
			continue
		}
		st.Set(e.Map, mapstate.Entry{Key: key, Value: e.Value})
	}
	maps, err := interp.NewMaps(prog, st, interp.MapOptions{Flags: s.flags})
	if err != nil {
		return diffRun{}, err
	}
	res, err := s.interp.Run(interp.Input{Packet: ex.Packet, Ifindex: ex.Ifindex, RxQueue: ex.RxQueue}, maps)
	if err != nil {
		return diffRun{}, err
	}
	edges, err := s.pather.Path(res.Path)
	if err != nil {
		return diffRun{}, err
	}
	r := diffRun{class: -1, path: -1}
	if p, ok := s.it.Locate(edges); ok {
		r.path, r.class, r.formula = p, s.class[p], s.it.runValue(p, edges)
	} else {
		notes[fmt.Sprintf("an example took a path of the %s program that its exploration did not reach", s.name)] = true
		r.formula = s.it.price(edges, false).Value
	}
	r.cost = r.formula.Eval(runPCVs(res))
	return r, nil
}

// runPCVs sums the PCVs a run met per map, under the names the formulas
// use.
func runPCVs(res *interp.Result) map[string]float64 {
	vars := map[string]float64{}
	for _, c := range res.Calls {
		for _, p := range c.PCV {
			vars[pcvVar(p.Name, c.Map)] += float64(p.Value)
		}
	}
	return vars
}

// describeState lists the map contents an example needs.
func describeState(ex *symex.Example) []string {
	var out []string
	for _, e := range ex.Maps {
		switch {
		case e.Global:
			continue
		case e.Absent:
			out = append(out, fmt.Sprintf("%s[%s] absent", e.Map, symex.Hex(e.Key)))
		default:
			out = append(out, fmt.Sprintf("%s[%s] = %s", e.Map, symex.Hex(e.Key), symex.Hex(e.Value)))
		}
	}
	return out
}

// conflict explains an example that gives one key of a map two different
// contents: lookups of one key meet one element while the map is not
// updated, but after an update the symbolic executor leaves the map's
// contents unconstrained, so a key looked up on both sides may differ.
func conflict(ex *symex.Example) string {
	seen := map[string]string{}
	for _, e := range ex.Maps {
		if e.Global {
			continue
		}
		k := e.Map + "[" + symex.Hex(e.Key) + "]"
		v := "absent"
		if !e.Absent {
			v = symex.Hex(e.Value)
		}
		if prev, ok := seen[k]; ok && prev != v {
			return " (its lookups of " + k + " want different contents)"
		}
		seen[k] = v
	}
	return ""
}
