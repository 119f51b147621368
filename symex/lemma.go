package symex

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dpperf/dpperf/smt"
)

// Programs branch on the same facts again and again: a parser with
// optional headers (VLAN tags of two kinds, IPv6 extension headers) reaches
// its later checks along many paths that differ only in which equivalent
// side of an early branch they took. When a later contradiction does not
// involve those early choices, every such path is refuted separately, and
// their number grows with the product of the early choices.
//
// A lemma remembers why a path prefix was refuted, in a form that other
// paths can be tested against without the solver: the assertions of the
// levels of an unsat core of the prefix (a set of its edges, not
// necessarily adjacent: a parser's length byte and the test, 64 bytes
// later, that its count ran out) that are contradictory on their own,
// together with the definitions those assertions use, with every name the
// path defined renamed in order of appearance. That text is
// a formula over the program's inputs (packet, length, map contents) and
// the solver has proven it unsatisfiable. Another path that takes the
// same edges (in a DAG, in the same order), whatever it does between
// them, and whose levels over them give the same text asserts that
// formula (under other names) among others, and is refuted too. The text is compared exactly,
// so nothing is assumed about the paths' states: a different earlier path
// that changes any definition the window uses gives a different text, and
// the path goes to the solver as before.

// refutedByLemma returns the length of the shortest prefix of the loaded
// path that a lemma refutes, or 0.
func (c *Checker) refutedByLemma() int {
	ls := c.opts.Lemmas
	if ls == nil {
		return 0
	}
	var w *window
	pos := map[int32]int{}
	for i, e := range c.path {
		pos[e] = i // a path of the DAG takes an edge at most once
	}
	texts := map[string]string{}
	var at []int
	for i, e := range c.path {
		for _, l := range ls.candidates(e) {
			at = at[:0]
			for _, le := range l.edges {
				p, ok := pos[le]
				if !ok || p > i {
					break
				}
				at = append(at, p)
			}
			if len(at) != len(l.edges) {
				continue
			}
			key := fmt.Sprint(at)
			t, ok := texts[key]
			if !ok {
				if w == nil {
					w = c.window(len(c.path))
				}
				t = w.textOf(at)
				texts[key] = t
			}
			if t == l.text {
				return i + 1
			}
		}
	}
	return 0
}

// learn explains a prefix of k levels the solver refuted: a second solver,
// which tracks named assertions, refutes it again and names an unsat core,
// the levels whose assertions are contradictory on their own. Their edges
// and the canonical text of their assertions become a lemma. The first
// solver keeps the path's levels. A core that cannot be had in the time
// left teaches nothing. It returns the length of the prefix the core
// refutes (its last level's), or 0 when the prefix was not refuted.
func (c *Checker) learn(ctx context.Context, k int, budget time.Duration) (int, error) {
	ls := c.opts.Lemmas
	if ls == nil || k == 0 {
		return 0, nil
	}
	if _, err := c.ensureCoreSolver(); err != nil {
		return 0, err
	}
	var lines []string
	for i, l := range c.levels[:k] {
		n := 0
		for _, line := range l.text {
			if a, ok := strings.CutPrefix(line, "(assert "); ok {
				line = "(assert (! " + a[:len(a)-1] + " :named a" + strconv.Itoa(i) + "_" + strconv.Itoa(n) + "))"
				n++
			}
			lines = append(lines, line)
		}
	}
	if err := c.coreSolver.Push(); err != nil {
		return 0, err
	}
	if err := c.coreSolver.Send(lines...); err != nil {
		return 0, err
	}
	c.Checks++
	r, err := c.coreSolver.CheckFor(ctx, budget)
	if errors.Is(err, smt.ErrStalled) {
		c.coreSolver.Close()
		c.coreSolver = nil
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	var core []string
	if r == smt.Unsat {
		if core, err = c.coreSolver.UnsatCore(); err != nil {
			return 0, err
		}
	}
	if err := c.coreSolver.Pop(); err != nil {
		return 0, err
	}
	if r != smt.Unsat {
		return 0, nil
	}
	at := coreLevels(core, k)
	if len(at) == 0 || len(at) == k {
		return k, nil // no core, or the whole prefix: prefix pruning covers it
	}
	refuted := at[len(at)-1] + 1
	edges := make([]int32, len(at))
	for i, l := range at {
		edges[i] = c.path[l]
	}
	ls.add(edges, c.window(k).textOf(at))
	if !c.opts.Families {
		return refuted, nil
	}
	fam := c.familyOf(at)
	if ls.hasFamily(fam) {
		return refuted, nil
	}
	ok, err := c.Family(ctx, fam, budget)
	if err != nil {
		return 0, err
	}
	if ok {
		ls.addFamily(fam)
		c.propose(fam, 1, -1)
	}
	return refuted, nil
}

// familyOf returns the edges of the family to prove impossible for a core
// (levels at): the core's edges, and those of the levels between its first
// and last whose conditions involve a value the core's conditions use. A
// branch on such a value (a label's remaining length tested for zero)
// decides what the family's over-approximation could not follow were it
// left to a region; a branch on anything else (the case of a label's
// byte) stays free, which is what makes the family large.
func (c *Checker) familyOf(at []int) []int32 {
	w := c.window(at[len(at)-1] + 1)
	var roots []string
	for _, i := range at {
		roots = append(roots, assertions(w.levels[i])...)
	}
	core := uses(roots, w.body)
	var edges []int32
	j := 0
	for i := at[0]; i <= at[len(at)-1]; i++ {
		if j < len(at) && at[j] == i {
			edges = append(edges, c.path[i])
			j++
			continue
		}
		for name := range uses(assertions(w.levels[i]), w.body) {
			if core[name] {
				edges = append(edges, c.path[i])
				break
			}
		}
	}
	return edges
}

// assertions returns the assertion lines of a level.
func assertions(text []string) []string {
	var out []string
	for _, line := range text {
		if strings.HasPrefix(line, "(assert ") {
			out = append(out, line)
		}
	}
	return out
}

// ensureCoreSolver returns the second solver, started on first use.
func (c *Checker) ensureCoreSolver() (*smt.Solver, error) {
	if c.coreSolver == nil {
		o := c.opts
		o.Solver.UnsatCores = true
		s, err := startSolver(o, c.g.Maps)
		if err != nil {
			return nil, err
		}
		c.coreSolver = s
	}
	return c.coreSolver, nil
}

// coreLevels returns the levels (below k, ascending) that the names of an
// unsat core ("a" level "_" index) point to.
func coreLevels(core []string, k int) []int {
	seen := map[int]bool{}
	var at []int
	for _, name := range core {
		l, _, ok := strings.Cut(strings.TrimPrefix(name, "a"), "_")
		n, err := strconv.Atoi(l)
		if !ok || err != nil || n < 0 || n >= k || seen[n] {
			continue
		}
		seen[n] = true
		at = append(at, n)
	}
	slices.Sort(at)
	return at
}
