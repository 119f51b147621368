package perfiface

import (
	"cmp"
	"math"
	"slices"
)

// Elimination of constraints. The tree that exploration gives tests the
// constraints in program order: a cheap test above dear subtrees stays
// however little it changes, so merging within subtrees keeps the
// interface as long as the code. Here a constraint is one condition on
// the input, wherever it is tested (the same expression, read without the
// layout of its place, so that pkt.icmp.type behind an IPv4 header of 20
// bytes and pkt.icmp.type behind one with options stay two). A condition
// that names the solver's own terms is one constraint per branch.
//
// Each feasible path (or subtree left open) is an item with its cost and
// its route: the outcome of every constraint it meets. The view at r is
// rebuilt top down over the items: a set whose costs lie within 2r is a
// class; otherwise the constraint whose outcome splits it into the
// fewest classes of width 2r (then the narrowest sides) is tested. An
// item whose route does not meet that constraint goes to both sides: an
// input of it meets one outcome or the other and either way ends in a
// class that holds its path, so every input is still within r of its
// class's value. Constraints that separate nothing wider than 2r are
// never tested: they are eliminated everywhere at once, and the items
// they separated are merged.

// constraint is one condition as a test: its positive form (not "!=" or
// "not"), and a Cond to show its source line.
type constraint struct {
	cond *Cond
	expr *expr
}

// outcome is one step of an item's route.
type outcome struct {
	key   int32
	holds bool
}

// item is a path, or a subtree left open, with its route sorted by key.
type item struct {
	path   int
	s      *spread
	lo, hi float64 // the costs with every PCV at 1
	route  []outcome
}

// items collects the leaves of the exploration tree and their routes,
// once per interface.
type items struct {
	list  []item
	cons  []constraint
	byKey map[string]int32
	// impact and met, once computed (docelim.go).
	impact []float64
	met    []int32
}

func (it *Interface) items() *items {
	if it.elim != nil {
		return it.elim
	}
	x := &items{byKey: map[string]int32{}}
	base := newLayout(it.prog)
	var walk func(n *Node, route []outcome)
	walk = func(n *Node, route []outcome) {
		if n.Leaf() {
			s := it.stats[n]
			lo, hi := s.lo, s.hi
			for _, r := range s.coef {
				lo += r[0]
				hi += r[1]
			}
			r := slices.Clone(route)
			slices.SortFunc(r, func(a, b outcome) int { return int(a.key - b.key) })
			x.list = append(x.list, item{path: n.Path, s: s, lo: lo, hi: hi, route: r})
			return
		}
		k, flip := x.key(n.Cond, base)
		walk(n.Then, append(route, outcome{k, !flip}))
		walk(n.Else, append(route, outcome{k, flip}))
	}
	if it.Root != nil {
		walk(it.Root, nil)
	}
	it.elim = x
	return x
}

// key names the constraint a Cond tests, and whether its Then side is the
// constraint failing.
func (x *items) key(c *Cond, base layout) (int32, bool) {
	e, flip := c.expr, false
	if e != nil && (e.op == "!=" || e.op == "not") {
		e, flip = negate(e), true
	}
	var name string
	if e != nil {
		name = render(e, base)
	}
	if e == nil || solverTerm(name) {
		// Only this branch: its own key.
		x.cons = append(x.cons, constraint{cond: c, expr: e})
		return int32(len(x.cons) - 1), flip
	}
	if k, ok := x.byKey[name]; ok {
		return k, flip
	}
	x.cons = append(x.cons, constraint{cond: c, expr: e})
	k := int32(len(x.cons) - 1)
	x.byKey[name] = k
	return k, flip
}

func (m *item) outcome(k int32) (holds, met bool) {
	i, ok := slices.BinarySearchFunc(m.route, k, func(o outcome, k int32) int { return int(o.key - k) })
	if !ok {
		return false, false
	}
	return m.route[i].holds, true
}

// eliminator builds one view at a resolution.
type eliminator struct {
	it    *Interface
	x     *items
	width float64 // classes narrower than this: twice the resolution
	next  float64 // the narrowest set refused (+Inf: none)
	used  map[int32]bool
}

// eliminated is the view at r with the constraints below it eliminated,
// and the next threshold.
func (it *Interface) eliminated(r float64) (*VNode, float64) {
	x := it.items()
	e := &eliminator{it: it, x: x, width: 2 * r, next: math.Inf(1), used: map[int32]bool{}}
	set := make([]int32, len(x.list))
	for i := range set {
		set[i] = int32(i)
	}
	root := e.build(set, newLayout(it.prog))
	return root, e.next / 2
}

func (e *eliminator) build(set []int32, l layout) *VNode {
	s := e.x.list[set[0]].s
	for _, i := range set[1:] {
		s = s.join(e.x.list[i].s)
	}
	if s.width() < e.width {
		return e.leaf(set, s)
	}
	k, ok := e.choose(set)
	if !ok {
		return e.leaf(set, s)
	}
	if w := s.width(); w < e.next {
		e.next = w
	}
	var then, els []int32
	for _, i := range set {
		holds, met := e.x.list[i].outcome(k)
		if !met || holds {
			then = append(then, i)
		}
		if !met || !holds {
			els = append(els, i)
		}
	}
	c := e.x.cons[k]
	text := render(c.expr, l)
	e.used[k] = true
	a, b := e.build(then, l.learn(c.expr, true)), e.build(els, l.learn(c.expr, false))
	delete(e.used, k)
	return &VNode{Test: text, Readable: !rawName(text), Source: c.cond.Source, Then: a, Else: b, key: k + 1}
}

func (e *eliminator) leaf(set []int32, s *spread) *VNode {
	f := s.mid()
	out := &VNode{Value: &f, Lo: s.lo, Hi: s.hi, Unknown: !s.possible, s: s}
	for _, i := range set {
		p := e.x.list[i].path
		out.Paths = append(out.Paths, p)
		if e.it.Paths[p].Bounded {
			out.Bounded++
		}
	}
	slices.Sort(out.Paths)
	return out
}

// choose picks the constraint to test on a set: one that separates some
// of its items from others (both outcomes met), whose sides can be
// covered by the fewest ranges of width 2r (cover), then that puts the
// fewest items on both sides, then the narrowest sides. Covering is
// linear in the set for each constraint, so it is counted for the
// candidates whose sides' ranges are the narrowest (shortlist) only.
func (e *eliminator) choose(set []int32) (int32, bool) {
	acc := map[int32]*[2]side{}
	for _, i := range set {
		for _, o := range e.x.list[i].route {
			if e.used[o.key] {
				continue
			}
			a := acc[o.key]
			if a == nil {
				a = &[2]side{}
				acc[o.key] = a
			}
			j := 0
			if o.holds {
				j = 1
			}
			a[j].add(&e.x.list[i])
		}
	}
	byLo := slices.Clone(set)
	slices.SortFunc(byLo, func(a, b int32) int { return cmp.Compare(e.x.list[a].lo, e.x.list[b].lo) })
	byHi := slices.Clone(set)
	slices.SortFunc(byHi, func(a, b int32) int { return cmp.Compare(e.x.list[b].hi, e.x.list[a].hi) })
	type cand struct {
		k     int32
		score [3]float64
	}
	var cands []cand
	for k, a := range acc {
		if a[0].n == 0 || a[1].n == 0 {
			continue
		}
		both := len(set) - a[0].n - a[1].n
		if both > 0 {
			// The items that do not meet k lie on both sides.
			var d side
			for _, i := range byLo {
				if _, met := e.x.list[i].outcome(k); !met {
					d.add(&e.x.list[i])
					break
				}
			}
			for _, i := range byHi {
				if _, met := e.x.list[i].outcome(k); !met {
					d.add(&e.x.list[i])
					break
				}
			}
			for j := range a {
				a[j].lo, a[j].hi = min(a[j].lo, d.lo), max(a[j].hi, d.hi)
			}
		}
		w0, w1 := a[0].hi-a[0].lo, a[1].hi-a[1].lo
		cands = append(cands, cand{k, [3]float64{e.est(w0) + e.est(w1), w0 + w1, float64(both)}})
	}
	if len(cands) == 0 {
		return -1, false
	}
	slices.SortFunc(cands, func(a, b cand) int {
		if slices.Compare(a.score[:], b.score[:]) < 0 {
			return -1
		}
		if slices.Compare(b.score[:], a.score[:]) < 0 {
			return 1
		}
		return int(a.k - b.k)
	})
	best, found := int32(-1), false
	var bestScore [3]float64
	for _, c := range cands[:min(len(cands), shortlist)] {
		var sides [2]cover
		for _, i := range byLo {
			m := &e.x.list[i]
			holds, met := m.outcome(c.k)
			if !met || !holds {
				sides[0].add(m, e.width)
			}
			if !met || holds {
				sides[1].add(m, e.width)
			}
		}
		score := [3]float64{float64(sides[0].n + sides[1].n), c.score[2], sides[0].spread() + sides[1].spread()}
		if !found || slices.Compare(score[:], bestScore[:]) < 0 {
			best, bestScore, found = c.k, score, true
		}
	}
	return best, found
}

// shortlist is how many constraints choose covers.
const shortlist = 16

// est is how many ranges of the width a range w needs at least.
func (e *eliminator) est(w float64) float64 {
	if e.width < 1e-9 {
		return 0
	}
	return math.Floor(w/e.width) + 1
}

// side is what a constraint's outcome leaves of a set: the range of the
// items that meet it.
type side struct {
	n      int
	lo, hi float64
}

func (d *side) add(m *item) {
	if d.n == 0 || m.lo < d.lo {
		d.lo = m.lo
	}
	if d.n == 0 || m.hi > d.hi {
		d.hi = m.hi
	}
	d.n++
}

// cover counts the ranges narrower than a width that cover items added
// in the order of their cheapest cost, each range from the cheapest of
// its items: about the fewest classes the items can be put in, whatever
// the tests.
type cover struct {
	n            int
	start, hi    float64
	first, worst float64
}

func (c *cover) add(m *item, width float64) {
	if c.n == 0 {
		c.first, c.worst = m.lo, m.hi
	}
	c.worst = max(c.worst, m.hi)
	if c.n > 0 && max(c.hi, m.hi)-c.start < width {
		c.hi = max(c.hi, m.hi)
		return
	}
	c.n++
	c.start, c.hi = m.lo, m.hi
}

func (c *cover) spread() float64 { return c.worst - c.first }
