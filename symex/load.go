package symex

import (
	"context"
	"errors"
	"fmt"

	"github.com/dpperf/dpperf/cfg"
)

// Loading paths: the edges of a path executed symbolically into levels,
// one per edge, each with its state and SMT text.

type deadPrefix struct{ n int }

func (d *deadPrefix) Error() string { return fmt.Sprintf("prefix of %d edges is infeasible", d.n) }

// load executes edges symbolically, reusing the states of the longest
// prefix shared with the previous path. The solver receives the new levels
// only when a check needs them (solverAt), so that the model of the last
// check stays available to decide them (byModel).
func (c *Checker) load(ctx context.Context, edges []int32) error {
	common := 0
	for common < len(c.path) && common < len(edges) && c.path[common] == edges[common] {
		common++
	}
	if err := c.solverAt(min(common, c.inSolver)); err != nil {
		return err
	}
	c.levels, c.path = c.levels[:common], c.path[:common]
	c.knownSat = min(c.knownSat, common)
	names := 0
	var st *state
	if common > 0 {
		l := c.levels[common-1]
		names, st = l.names, l.st
	}
	for i := common; i < len(edges); i++ {
		if (i-common)%256 == 255 && ctx.Err() != nil {
			return ctx.Err()
		}
		l, err := c.step(st, names, edges[i], i)
		if err != nil {
			return err
		}
		c.levels = append(c.levels, l)
		c.path = append(c.path, edges[i])
		st, names = l.st, l.names
	}
	return nil
}

// loadLive loads edges and reports a prefix that folds to false as dead,
// counted in Folded.
func (c *Checker) loadLive(ctx context.Context, edges []int32) (dead bool, err error) {
	err = c.load(ctx, edges)
	if isDead(err) {
		c.Folded++
		return true, nil
	}
	return false, err
}

func isDead(err error) bool {
	var d *deadPrefix
	return errors.As(err, &d)
}

// Text returns the SMT commands of the first n edges of the loaded path,
// one slice per edge: declarations, definitions, assertions and the
// comments that say what a name stands for (see Describe).
func (c *Checker) Text(n int) [][]string {
	out := make([][]string, min(n, len(c.levels)))
	for i := range out {
		out[i] = c.levels[i].text
	}
	return out
}

// step executes edge number i of a path (its condition and the body of
// the node it enters) on a copy of st.
func (c *Checker) step(st *state, names int, edge int32, i int) (level, error) {
	return c.exec(st, names, c.notes, famStep{edge: edge}, i)
}

// exec executes step number i on a copy of st: an edge (its condition
// and the body of the node it enters), or a region of a family (see
// Family) and the body of the node after it.
func (c *Checker) exec(st *state, names int, notes map[string]bool, s famStep, i int) (level, error) {
	var ns *state
	if st == nil {
		ns = &state{lens: span{int64(c.opts.MinPacket), int64(c.opts.MaxPacket)}}
	} else {
		ns = st.clone()
	}
	var out []string
	m := &machine{g: c.g, p: c.g.Prog, st: ns, notes: notes}
	m.b = builder{out: &out, next: &names, decided: ns.decided, eqs: ns.eqs, abstract: c.abstract(), where: m.at, notes: notes, lens: &ns.lens}
	var err error
	var e cfg.Edge
	switch {
	case s.havoc != nil:
		m.havocRegion(s.havoc)
		e = cfg.Edge{To: s.into, Kind: cfg.EdgeJump}
	default:
		e = c.g.Edges[s.edge]
		if e.Kind == cfg.EdgeEntry {
			zero := int64(0)
			m.enter(term{w: 64, s: "len", lin: &zero})
			m.b.decided, m.b.eqs = ns.decided, ns.eqs
		} else {
			err = m.edge(e)
		}
	}
	tests := m.nAsserts
	if err == nil && !m.dead {
		err = m.body(e.To)
	}
	if err != nil {
		return level{}, err
	}
	if m.dead {
		return level{}, &deadPrefix{i + 1}
	}
	testOnly := (e.Kind == cfg.EdgeTaken || e.Kind == cfg.EdgeNotTaken) && tests == 1 && m.nAsserts == 1
	return level{st: ns, text: out, names: names, asserts: m.asserted, testOnly: testOnly}, nil
}

// Describe executes a path of g symbolically, without a solver, and
// returns the SMT commands of each edge and the notes on what the
// execution over-approximated. A path that folds to false ends early with
// a nil error; an invalid program is an *bpfprog.InvalidError.
func Describe(g *cfg.Graph, opts Options, edges []int32) ([][]string, []string, error) {
	c := &Checker{g: g, opts: opts.withDefaults(), notes: map[string]bool{}, model: -1}
	text, err := c.Describe(edges)
	if isDead(err) {
		err = nil
	}
	return text, c.Notes(), err
}

// Describe executes edges symbolically without the solver and returns the
// SMT commands of each edge, as Text does for a loaded path. It leaves the
// Checker's loaded path and solver untouched, so it works after the
// solver was stopped.
func (c *Checker) Describe(edges []int32) ([][]string, error) {
	common := 0
	for common < len(c.path) && common < len(edges) && c.path[common] == edges[common] {
		common++
	}
	out := make([][]string, 0, len(edges))
	names := 0
	var st *state
	for i := 0; i < common; i++ {
		out = append(out, c.levels[i].text)
	}
	if common > 0 {
		names, st = c.levels[common-1].names, c.levels[common-1].st
	}
	for i := common; i < len(edges); i++ {
		l, err := c.step(st, names, edges[i], i)
		if err != nil {
			return nil, err
		}
		out = append(out, l.text)
		st, names = l.st, l.names
	}
	return out, nil
}
