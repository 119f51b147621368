package symex

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cilium/ebpf/asm"

	"github.com/dpperf/dpperf/cfg"
	"github.com/dpperf/dpperf/smt"
)

// A lemma (lemma.go) refutes one path at a time: a path must be executed
// before its text can be compared. When the paths that share a core differ
// in choices that have nothing to do with it (a parser's case folding of
// every byte between a label's length and the end of the label), their
// number grows with the product of those choices, and the enumeration
// meets them one by one.
//
// A family is the set of every source-to-sink path that takes given edges
// in order, whatever it does between them. Family proves, with one solver
// check, that no path of the family can run, so that the enumeration can
// leave the whole family out. It executes one over-approximation of all
// of them: between two of the given edges (and before the first), the
// nodes that every path of the family passes are executed exactly, with
// the branch edges that every path takes; where the paths part and meet
// again (a region), everything a node of the region may write (registers,
// stack slots at constant offsets) is given a fresh unconstrained value and
// the region's branch conditions are dropped. Every path of the family is
// an instance of that execution, so when its conditions are contradictory,
// so are every path's. A region that may write memory other than its own
// stack at constant offsets, call a helper or a function, or exit is not
// over-approximated: Family then proves nothing.

// writes is what the nodes of a region may write.
type writes struct {
	regs  [11]bool
	slots map[int64]int // stack offset → largest store size there
}

// errOpaque says a region's effect is not over-approximated.
var errOpaque = errors.New("region with an effect that is not modelled")

// regionWrites collects the writes of the nodes of a region.
func regionWrites(g *cfg.Graph, nodes []cfg.NodeID) (*writes, error) {
	w := &writes{slots: map[int64]int{}}
	for _, n := range nodes {
		b := g.Block(n)
		if b == nil {
			return nil, errOpaque
		}
		for i := b.First; i <= b.Last; i++ {
			ins := g.Prog.Insns[i]
			op := ins.OpCode
			switch cls := op.Class(); {
			case cls.IsALU(), cls == asm.LdXClass, cls == asm.LdClass && op.Mode() == asm.ImmMode:
				w.regs[ins.Dst] = true
			case cls == asm.StClass || cls == asm.StXClass:
				if op.Mode() == asm.AtomicMode || ins.Dst != asm.R10 {
					return nil, errOpaque
				}
				off, size := int64(ins.Offset), int(op.Size().Sizeof())
				w.slots[off] = max(w.slots[off], size)
			case cls.IsJump():
				switch op.JumpOp() {
				case asm.Call, asm.Exit:
					return nil, errOpaque
				}
			default:
				return nil, errOpaque
			}
		}
	}
	return w, nil
}

// havocRegion gives everything w may write a fresh unconstrained value.
func (m *machine) havocRegion(w *writes) {
	for r, ok := range w.regs {
		if ok {
			m.st.regs[r] = scalar(m.b.fresh(64, "h"))
		}
	}
	if len(w.slots) == 0 {
		return
	}
	cells := m.st.writable(m.st.frame)
	for off, size := range w.slots {
		for i := range int64(size) {
			delete(cells, off+i) // read back as unconstrained bytes
		}
	}
}

// famStep is one step of a family's execution: an edge taken exactly, or
// a region (havoc set) followed by the body of the node it meets at.
type famStep struct {
	edge int32
	hv   *writes
	into cfg.NodeID
}

// familyPlan lays out the steps of the over-approximation of the paths that
// take edges in order, up to the last of them.
func familyPlan(g *cfg.Graph, out [][]int32, edges []int32, keep int) ([]famStep, error) {
	var steps []famStep
	from := g.Source
	for i, e := range edges {
		seg, nodes, err := segment(g, out, from, g.Edges[e].From)
		if err != nil {
			return nil, err
		}
		if i == 0 && keep > 0 && len(seg) > keep+2 {
			if seg, err = coarse(g, seg, nodes, keep); err != nil {
				return nil, err
			}
		}
		steps = append(steps, seg...)
		steps = append(steps, famStep{edge: e})
		from = g.Edges[e].To
	}
	return steps, nil
}

// coarse keeps the first step (the program's entry) and the last keep
// steps of a segment from the source, and makes one region of everything
// between: far from a family's first edge, what the program did matters
// less than what it may have written, and the check is smaller.
func coarse(g *cfg.Graph, seg []famStep, nodes []cfg.NodeID, keep int) ([]famStep, error) {
	entry := g.Edges[seg[0].edge].To
	last := seg[len(seg)-keep-1]
	into := last.into
	if last.hv == nil {
		into = g.Edges[last.edge].To
	}
	var inside []cfg.NodeID
	for _, n := range nodes {
		if n > entry && n < into {
			inside = append(inside, n)
		}
	}
	w, err := regionWrites(g, inside)
	if err != nil {
		return nil, err
	}
	out := []famStep{seg[0], {edge: -1, hv: w, into: into}}
	return append(out, seg[len(seg)-keep:]...), nil
}

// segment lays out the steps from node a (whose body has run) to node b
// (whose body runs last) over every path between them, and returns the
// nodes on such paths.
func segment(g *cfg.Graph, out [][]int32, a, b cfg.NodeID) ([]famStep, []cfg.NodeID, error) {
	if a == b {
		return nil, nil, nil
	}
	if a > b {
		return nil, nil, errOpaque // no path takes the edges in this order
	}
	// The nodes between a and b on some path from a to b: reachable from
	// a (forward, in topological order), and reaching b (backward).
	n := int(b-a) + 1
	fwd, bwd := make([]bool, n), make([]bool, n)
	fwd[0] = true
	for v := a; v <= b; v++ {
		if !fwd[v-a] {
			continue
		}
		for _, e := range out[v] {
			if to := g.Edges[e].To; to <= b {
				fwd[to-a] = true
			}
		}
	}
	if !fwd[n-1] {
		return nil, nil, errOpaque
	}
	bwd[n-1] = true
	for v := b - 1; v >= a; v-- {
		if !fwd[v-a] {
			continue
		}
		for _, e := range out[v] {
			if to := g.Edges[e].To; to <= b && bwd[to-a] {
				bwd[v-a] = true
			}
		}
	}
	// In a topological numbering, a node of the segment lies on every path
	// from a to b when no edge of the segment jumps over it.
	over := make([]int, n+1)
	for v := a; v <= b; v++ {
		if !bwd[v-a] {
			continue
		}
		for _, e := range out[v] {
			if to := g.Edges[e].To; to <= b && bwd[to-a] && to > v+1 {
				over[v-a+1]++
				over[to-a]--
			}
		}
	}
	var steps []famStep
	prev, inside := a, []cfg.NodeID(nil)
	depth := 0
	for i := 1; i < n; i++ {
		depth += over[i]
		v := a + cfg.NodeID(i)
		if !bwd[i] {
			continue
		}
		if depth > 0 {
			inside = append(inside, v)
			continue
		}
		// v is on every path: one edge from prev, or a region between.
		var direct []int32
		for _, e := range out[prev] {
			if to := g.Edges[e].To; to <= b && bwd[to-a] {
				direct = append(direct, e)
			}
		}
		if len(inside) == 0 && len(direct) == 1 {
			steps = append(steps, famStep{edge: direct[0]})
		} else {
			for _, e := range out[prev] {
				if k := g.Edges[e].Kind; k == cfg.EdgeCall || k == cfg.EdgeReturn || k == cfg.EdgeExit {
					return nil, nil, errOpaque
				}
			}
			w, err := regionWrites(g, inside)
			if err != nil {
				return nil, nil, err
			}
			steps = append(steps, famStep{edge: -1, hv: w, into: v})
		}
		prev, inside = v, inside[:0]
	}
	var nodes []cfg.NodeID
	for i, ok := range bwd {
		if ok {
			nodes = append(nodes, a+cfg.NodeID(i))
		}
	}
	return steps, nodes, nil
}

// familyRun executes the steps of a family: dead when a condition folds
// to false, else the SMT commands; ok is false when an execution the
// over-approximation cannot make stopped it.
func (c *Checker) familyRun(steps []famStep) (dead bool, lines []string, ok bool) {
	notes := map[string]bool{} // over-approximations are the point here
	var st *state
	names := 0
	for i, s := range steps {
		l, err := c.exec(st, names, notes, s, i)
		if isDead(err) {
			return true, nil, true
		}
		if err != nil {
			return false, nil, false
		}
		lines = append(lines, l.text...)
		st, names = l.st, l.names
	}
	return false, lines, true
}

// learnFolded looks for a family of a prefix that folded to false: the
// smallest window of its last edges (2, 4, 8, ... of them, at most half
// the prefix) whose family's over-approximation folds to false too. The contradiction of a folded
// prefix is usually local (a constant a branch tests), and every path with
// the window, whatever it did before, is then left out.
func (c *Checker) learnFolded(edges []int32) {
	ls := c.opts.Lemmas
	if ls == nil || !c.opts.Families {
		return
	}
	n := len(edges)
	last := edges[n-1]
	if c.foldMisses[last] >= maxFoldMisses {
		return
	}
	for j := 2; j <= n/2; j *= 2 {
		fam := edges[n-j:]
		if ls.hasFamily(fam) {
			return
		}
		for _, keep := range []int{coarseKeep, 0} {
			if steps, ok := c.plan(fam, keep); ok {
				if dead, _, _ := c.familyRun(steps); dead {
					ls.addFamily(fam)
					c.propose(fam, 1, -1)
					return
				}
			}
		}
	}
	if c.foldMisses == nil {
		c.foldMisses = map[int32]int{}
	}
	c.foldMisses[last]++
}

// maxFoldMisses is how often learnFolded looks for a family of prefixes
// that fold at the same edge without finding one before it stops looking:
// a contradiction that depends on the whole path (a test of a value every
// earlier branch changed) has no family smaller than a path.
const maxFoldMisses = 3

// coarseKeep is how many steps before a family's first edge are executed
// exactly in its coarse over-approximation (see coarse).
const coarseKeep = 24

// plan lays out a family's steps; false when its paths cannot be
// over-approximated.
func (c *Checker) plan(edges []int32, keep int) ([]famStep, bool) {
	if c.out == nil {
		c.out = c.g.OutEdges()
	}
	steps, err := familyPlan(c.g, c.out, edges, keep)
	return steps, err == nil
}

// Family reports whether no path that takes edges (in order; the core of
// a refuted path) can run, by a check of the over-approximation of all of
// them within budget: first a coarse one (see coarse), then, when that
// proves nothing, the exact chain from the program's entry. False proves
// nothing.
func (c *Checker) Family(ctx context.Context, edges []int32, budget time.Duration) (bool, error) {
	if len(edges) == 0 {
		return false, nil
	}
	prev := -1
	for _, keep := range []int{coarseKeep, 0} {
		steps, ok := c.plan(edges, keep)
		if !ok || len(steps) == prev {
			continue
		}
		prev = len(steps)
		ok, err := c.proveSteps(ctx, steps, budget)
		if ok || err != nil {
			return ok, err
		}
	}
	return false, nil
}

// proveSteps executes a family's steps and checks their conditions.
func (c *Checker) proveSteps(ctx context.Context, steps []famStep, budget time.Duration) (bool, error) {
	dead, lines, ok := c.familyRun(steps)
	switch {
	case dead:
		return true, nil
	case !ok:
		return false, nil
	}
	if c.fam == nil {
		s, err := startSolver(c.opts, c.g.Maps)
		if err != nil {
			return false, err
		}
		c.fam = s
	}
	s := c.fam

	if err := s.Push(); err != nil {
		return false, err
	}
	if err := s.Send(lines...); err != nil {
		return false, err
	}
	c.Checks++
	r, err := s.CheckFor(ctx, budget)
	if errors.Is(err, smt.ErrStalled) {
		s.Close()
		c.fam = nil
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return r == smt.Unsat, s.Pop()
}

// Unrolled loops repeat their code: a family proven for one iteration
// (a label that starts at byte 40 and is still running 64 bytes later) has
// a twin one iteration later, whose edges sit a fixed number of
// instructions further on. propose queues the twins of a proven family, in
// both directions, in the Lemmas store; every Checker of the search proves
// queued twins before its next path (provePending), and a proven twin
// queues its own twin in the same direction, for as long as every edge of
// the family has a twin at the same distance. The distance is only a guess
// at what repeats: each twin is proven on its own, so a wrong guess costs
// a check and never a wrong family.
func (c *Checker) propose(fam []int32, dirs ...int) {
	if c.twins == nil {
		c.indexEdges()
	}
	for _, dir := range dirs {
		if next := c.twin(fam, dir); next != nil {
			c.opts.Lemmas.queue(twin{next, dir})
		}
	}
}

// provePending proves the queued twins, each within budget.
func (c *Checker) provePending(ctx context.Context, budget time.Duration) error {
	ls := c.opts.Lemmas
	for ctx.Err() == nil {
		t, ok := ls.dequeue()
		if !ok {
			return nil
		}
		if !ls.claim(t) {
			continue
		}
		ok, err := c.Family(ctx, t.edges, budget)
		if err != nil {
			return err
		}
		if ok {
			ls.addFamily(t.edges)
			c.Twins++
			c.propose(t.edges, t.dir)
		}
	}
	return nil
}

// twin is a family to prove: a proven one's twin in direction dir.
type twin struct {
	edges []int32
	dir   int
}

// edgeShape is what a twin edge has in common with its edge: its kind
// and the opcode of the jump that leaves its source node (registers are
// allocated differently in different iterations, so the rest of the code
// may differ).
type edgeShape struct {
	jump asm.OpCode
	kind cfg.EdgeKind
}

func (c *Checker) edgeShape(e cfg.Edge) edgeShape {
	_, last := c.g.Insns(e.From)
	return edgeShape{c.g.Prog.Insns[last].OpCode, e.Kind}
}

// placed is an edge at the first instruction of its source node.
type placed struct {
	at   int
	edge int32
}

// indexEdges indexes the edges by shape, each shape's edges in the order of
// their instructions, and the nodes' first instructions by shape.
func (c *Checker) indexEdges() {
	c.twins = map[edgeShape][]placed{}
	c.shapes = map[string][]int{}
	shapeOf := make([]string, len(c.g.Nodes))
	for n := range c.g.Nodes {
		if c.g.Block(cfg.NodeID(n)) == nil {
			continue
		}
		first, _ := c.g.Insns(cfg.NodeID(n))
		shapeOf[n] = c.shape(cfg.NodeID(n))
		c.shapes[shapeOf[n]] = append(c.shapes[shapeOf[n]], first)
	}
	for i, e := range c.g.Edges {
		if shapeOf[e.From] == "" || shapeOf[e.To] == "" {
			continue
		}
		k := c.edgeShape(e)
		first, _ := c.g.Insns(e.From)
		c.twins[k] = append(c.twins[k], placed{first, int32(i)})
	}
	for _, firsts := range c.shapes {
		slices.Sort(firsts)
	}
	for _, ps := range c.twins {
		slices.SortFunc(ps, func(a, b placed) int { return a.at - b.at })
	}
}

// shape is a node's opcodes, registers and immediates left out.
func (c *Checker) shape(n cfg.NodeID) string {
	first, last := c.g.Insns(n)
	var b strings.Builder
	for i := first; i <= last; i++ {
		fmt.Fprintf(&b, "%x,", uint16(c.g.Prog.Insns[i].OpCode))
	}
	return b.String()
}

// twin returns the family one iteration after fam (dir 1) or before it
// (dir -1): the distance is that from the first edge's node to the nearest
// node of the same shape in that direction, and every edge is replaced by
// the edge of its shape nearest to that distance from it (iterations of
// unrolled code differ a little in length where registers were allocated
// differently); nil when an edge has none within half the distance.
func (c *Checker) twin(fam []int32, dir int) []int32 {
	e0 := c.g.Edges[fam[0]]
	if c.g.Block(e0.From) == nil {
		return nil
	}
	first, _ := c.g.Insns(e0.From)
	firsts := c.shapes[c.shape(e0.From)]
	i, found := slices.BinarySearch(firsts, first)
	j := i - 1
	if dir > 0 {
		j = i
		if found {
			j = i + 1
		}
	}
	if j < 0 || j >= len(firsts) {
		return nil
	}
	delta := firsts[j] - first
	tol := max(delta, -delta) / 2
	out := make([]int32, len(fam))
	for k, e := range fam {
		ed := c.g.Edges[e]
		if c.g.Block(ed.From) == nil || c.g.Block(ed.To) == nil {
			return nil
		}
		ps := c.twins[c.edgeShape(ed)]
		at, _ := c.g.Insns(ed.From)
		want := at + delta
		n, _ := slices.BinarySearchFunc(ps, want, func(p placed, w int) int { return p.at - w })
		best, bestD := int32(-1), tol+1
		for _, m := range []int{n - 1, n} {
			if m >= 0 && m < len(ps) {
				if d := max(ps[m].at-want, want-ps[m].at); d < bestD {
					best, bestD = ps[m].edge, d
				}
			}
		}
		if best < 0 {
			return nil
		}
		out[k] = best
	}
	for k := 1; k < len(out); k++ {
		if c.g.Edges[out[k]].From < c.g.Edges[out[k-1]].To {
			return nil // not in the order of a path
		}
	}
	return out
}
