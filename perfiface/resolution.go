package perfiface

import (
	"math"
)

// Resolution as the source document defines it: an interface at
// resolution r predicts every input's cost within r. A class returns the
// middle of its paths' range, so a class whose range is narrower than 2r
// predicts each of its inputs within r.
//
// Resolution-based merging. The impact of a test is the largest cost
// difference between two inputs that differ only in its outcome: the
// inputs of its two sides that meet the same outcomes of every other test
// below it. The view at r is built bottom up: a subtree whose whole range
// is narrower than 2r is one class; otherwise both sides are viewed at r
// and the test is eliminated when its sides can be laid over each other
// (merge) with every resulting class narrower than 2r: its impact is
// then below the resolution. Laying two sides over each other keeps the
// tests they share (the same text) and, where one side has a class and
// the other a test, puts the class under both outcomes of that test: an
// input of that class meets one outcome or the other, and either way
// ends in a class that holds its paths. So a cheap test above dear ones
// disappears when what it leads to costs the same either way.
//
// Merging within the tree keeps the exploration's order of tests. The
// view at r is also built by eliminating constraints wherever they are
// tested (eliminate.go), and the one with fewer classes is used.
//
// The thresholds are the resolutions at which a decision flips: half of
// the narrowest range refused at the previous one (sweep). Between two
// thresholds the view is the same. A view at a threshold that has more
// classes than one at a finer threshold is not used: the finer view
// predicts within the coarser resolution too, so the number of classes
// never grows with the resolution.

// viewer builds one view at a resolution.
type viewer struct {
	it    *Interface
	width float64 // classes narrower than this: twice the resolution
	next  float64 // the narrowest range refused (+Inf: none)
}

func (vw *viewer) refuse(w float64) {
	if w >= vw.width && w < vw.next {
		vw.next = w
	}
}

func (vw *viewer) view(n *Node, l layout) *VNode {
	it := vw.it
	s := it.stats[n]
	if n.Leaf() || s.width() < vw.width {
		return it.leafOf(n, s)
	}
	vw.refuse(s.width())
	c, then, els := n.Cond, n.Then, n.Else
	if c.expr != nil && (c.expr.op == "!=" || c.expr.op == "not") {
		// Read "if x == 1: B else: A" rather than "if x != 1: A else: B".
		neg := *c
		neg.expr = negate(c.expr)
		c, then, els = it.negated(c, &neg), els, then
	}
	t := it.text(c, l)
	a, b := vw.view(then, l.learn(c.expr, true)), vw.view(els, l.learn(c.expr, false))
	if m, w, ok := overlay(a, b, a.classes()+b.classes()-1); ok {
		if w < vw.width {
			return m
		}
		vw.refuse(w)
	}
	return &VNode{Test: t.text, Readable: t.readable, Source: c.Source, Then: a, Else: b}
}

// leafOf is the class of a whole subtree.
func (it *Interface) leafOf(n *Node, s *spread) *VNode {
	f := s.mid()
	out := &VNode{Value: &f, Lo: s.lo, Hi: s.hi, Unknown: !s.possible, s: s}
	it.leaves(n, &out.Paths)
	for _, p := range out.Paths {
		if it.Paths[p].Bounded {
			out.Bounded++
		}
	}
	return out
}

// overlay lays two views over each other (see above): a tree of the
// tests of both, each class the union of the classes an input of either
// can end in. Where both test the same thing it is tested once; where
// they test different things, the test of one is put above the other
// whole (the order with fewer classes is kept). It returns the widest
// class, and false when the two cannot be laid over each other in fewer
// classes than they have apart, or within budget leaves.
func overlay(a, b *VNode, budget int) (*VNode, float64, bool) {
	x, wx, okx := lay(a, b, budget)
	if okx {
		budget = x.classes() - 1
	}
	if !a.leaf() && !b.leaf() && a.Test != b.Test {
		if y, wy, oky := lay(b, a, budget); oky {
			return y, wy, true
		}
	}
	return x, wx, okx
}

// lay is overlay in one order: where the two test different things,
// a's test goes above.
func lay(a, b *VNode, budget int) (*VNode, float64, bool) {
	switch {
	case budget < 1:
		return nil, 0, false
	case a.leaf() && b.leaf():
		m := joined(a, b)
		return m, m.s.width(), true
	case a.leaf():
		a, b = b, a
	}
	if solverTerm(a.Test) {
		return nil, 0, false
	}
	bt, be := b, b
	if !b.leaf() && b.Test == a.Test {
		bt, be = b.Then, b.Else
	}
	t, wt, ok := lay(a.Then, bt, budget-1)
	if !ok {
		return nil, 0, false
	}
	e, we, ok := lay(a.Else, be, budget-t.classes())
	if !ok {
		return nil, 0, false
	}
	return &VNode{Test: a.Test, Readable: a.Readable, Source: a.Source, Then: t, Else: e}, max(wt, we), true
}

// classes counts the leaves below v.
func (v *VNode) classes() int {
	if v.leaf() {
		return 1
	}
	return v.Then.classes() + v.Else.classes()
}

// joined is one class made of two: the middle of the union of their
// ranges.
func joined(a, b *VNode) *VNode {
	s := a.s.join(b.s)
	f := s.mid()
	return &VNode{Value: &f, Lo: s.lo, Hi: s.hi, Paths: append(append([]int(nil), a.Paths...), b.Paths...),
		Unknown: !s.possible, Bounded: a.Bounded + b.Bounded, s: s}
}

// step is one threshold of the sweep: the view just above Value as built
// there (raw), with its size.
type step struct {
	value          float64
	classes, lines int
	next           float64 // the next threshold (+Inf: none)
}

// floor is the resolution the interface holds at: above half its widest
// open subtree (a coarse interface), else 0.
func (it *Interface) floor() float64 { return it.Reached / 2 }

// Floor is the finest resolution at which the interface holds: 0 when
// every subtree was explored, else half the widest open interval (its
// class returns the middle).
func (it *Interface) Floor() float64 { return it.floor() }

// raw builds the view at r by the merging above, and the next threshold.
func (it *Interface) raw(r float64) (*VNode, float64) {
	if it.Root == nil {
		return nil, math.Inf(1)
	}
	vw := &viewer{it: it, width: 2 * r, next: math.Inf(1)}
	root := coalesce(vw.view(it.Root, newLayout(it.prog)), it.Coarse)
	next := vw.next / 2
	if r > 1e-9 && countClasses(root) > DefaultClasses { // not the exact view
		// Eliminating constraints wherever they are tested (eliminate.go)
		// may do better than merging within the tree; the next threshold
		// is where either changes.
		e, enext := it.eliminated(r)
		e = coalesce(e, it.Coarse)
		next = min(next, enext)
		if n, m := countClasses(e), countClasses(root); n < m ||
			(n == m && it.pythonLines(&View{Root: e}) < it.pythonLines(&View{Root: root})) {
			root = e
		}
	}
	return root, next
}

// countClasses counts the leaves of a view's tree.
func countClasses(v *VNode) int { return (&View{Root: v}).Classes() }

// sweepTo extends the sweep of thresholds up to r: the steps whose value
// is below r.
func (it *Interface) sweepTo(r float64) {
	if len(it.steps) == 0 {
		it.addStep(it.floor())
	}
	for {
		last := it.steps[len(it.steps)-1]
		if math.IsInf(last.next, 1) || last.next >= r {
			return
		}
		it.addStep(last.next)
	}
}

func (it *Interface) addStep(t float64) {
	root, next := it.raw(math.Nextafter(t, math.Inf(1)))
	v := &View{Resolution: math.Nextafter(t, math.Inf(1)), Root: root}
	it.steps = append(it.steps, step{value: t, classes: v.Classes(), lines: it.pythonLines(v), next: next})
}

// used returns the steps whose views are used, finest first: each has
// fewer classes (or as many in fewer lines) than every finer one.
func (it *Interface) used(r float64) []step {
	it.sweepTo(r)
	var out []step
	for _, s := range it.steps {
		if s.value >= r && len(out) > 0 {
			break
		}
		if n := len(out); n == 0 || s.classes < out[n-1].classes ||
			(s.classes == out[n-1].classes && s.lines < out[n-1].lines) {
			out = append(out, s)
		}
	}
	return out
}
