package perfiface

import (
	"container/heap"
	"context"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/dpperf/dpperf/cfg"
	"github.com/dpperf/dpperf/internal/fail"
	"github.com/dpperf/dpperf/smt"
	"github.com/dpperf/dpperf/symex"
	"github.com/dpperf/dpperf/target"
)

// Refine explores coarse first. Every subtree it has not entered is an
// open leaf with the interval of its inputs' costs: from the cheapest to
// the dearest way through the graph from where its prefix ends (the
// passes of bounded.go, linear in the graph, no solver). The widest open
// leaf is refined next: the sides of its next branch with more than one
// feasible side are decided, and each becomes an open leaf of its own. At
// every step the tree is a valid interface at any resolution above the
// widest open interval (the resolution reached), so a search stopped by
// a time limit or an interrupt still answers, coarser.

// DefaultClasses is the number of classes Refine aims at when no
// resolution is asked for.
const DefaultClasses = 30

// spare is how many times DefaultClasses the tree may hold at the resolution
// reached before the refinement stops without a resolution: the finer
// tree narrows the classes of the view Choose then picks.
const spare = 10

// RefineOptions configure Refine.
type RefineOptions struct {
	// Check, Workers and Progress as for Explore; MaxPaths bounds the
	// leaves of the tree, explored or open (0: no bound).
	ExploreOptions
	Metric string         // orders the refinement, as Build prices it
	Target *target.Target // for MetricCost and PCV terms
	// Resolution: refine until every open interval is narrower. 0: refine
	// widest first while the tree at the resolution reached has at most
	// Classes classes (default DefaultClasses).
	Resolution float64
	Classes    int
}

// rnode is a node of the tree under refinement: a branch (cond set), or a
// leaf, a feasible path to the sink or an open prefix.
type rnode struct {
	parent    *rnode
	then, els *rnode
	cond      *Cond
	edges     []int32
	res       smt.Result
	open      bool
	s         *spread // nil: not priced yet (a branch's, recomputed after a change below)
	index     int     // in the queue, while open there
}

// queue holds open leaves, widest first.
type queue []*rnode

func width(n *rnode) float64 {
	if n.s == nil {
		return math.Inf(1) // the unexplored root
	}
	return n.s.width()
}

func (q queue) Len() int { return len(q) }
func (q queue) Less(i, j int) bool {
	if wi, wj := width(q[i]), width(q[j]); wi != wj {
		return wi > wj
	}
	return len(q[i].edges) < len(q[j].edges)
}
func (q queue) Swap(i, j int) {
	q[i], q[j] = q[j], q[i]
	q[i].index, q[j].index = i, j
}
func (q *queue) Push(v any) {
	n := v.(*rnode)
	n.index = len(*q)
	*q = append(*q, n)
}
func (q *queue) Pop() any {
	old := *q
	n := old[len(old)-1]
	*q = old[:len(old)-1]
	return n
}

type refiner struct {
	x    *explorer
	pr   *Interface // prices leaves
	opts RefineOptions

	mu      sync.Mutex
	wake    *sync.Cond
	root    *rnode
	open    queue
	busy    int // open leaves being refined
	paths   int // complete paths in the tree
	done    bool
	stopped bool
	err     error
}

// Refine explores g coarse first (see RefineOptions) and returns the tree
// with its open leaves as bounded paths.
func Refine(ctx context.Context, g *cfg.Graph, opts RefineOptions) (*Exploration, error) {
	opts.Check = checkOptions(opts.Check, opts.NoLemmas)
	if opts.Classes <= 0 {
		opts.Classes = DefaultClasses
	}
	pr, err := newInterface(g, opts.Metric, opts.Target, "")
	if err != nil {
		return nil, err
	}
	x := &explorer{g: g, out: g.OutEdges(), opts: opts.ExploreOptions, start: time.Now(), notes: map[string]bool{}}
	r := &refiner{x: x, pr: pr, opts: opts, root: &rnode{res: smt.Sat, open: true}}
	r.wake = sync.NewCond(&r.mu)
	heap.Push(&r.open, r.root)
	var checkers []*symex.Checker
	defer func() {
		for _, c := range checkers {
			c.Close()
		}
	}()
	for range max(opts.Workers, 1) {
		c, err := symex.NewChecker(g, opts.Check)
		if err != nil {
			return nil, err
		}
		checkers = append(checkers, c)
	}
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stopProgress := r.report(sctx)
	var wg sync.WaitGroup
	for _, c := range checkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.work(ctx, c)
		}()
	}
	wg.Wait()
	stopProgress()
	if r.err != nil {
		return nil, r.err
	}
	ex := &Exploration{G: g, Coarse: true, Stopped: r.stopped, Progress: r.progress(), WellFormed: opts.Check.WellFormed}
	if r.root != nil && !(r.root.open && len(r.root.edges) == 0) {
		ex.Root = r.tree(r.root, &ex.Paths)
	} else if r.root != nil {
		ex.Truncated = true // stopped before the first branch
	}
	for _, c := range checkers {
		for _, n := range c.Notes() {
			x.notes[n] = true
		}
	}
	for n := range x.notes {
		ex.Notes = append(ex.Notes, n)
	}
	slices.Sort(ex.Notes)
	if ex.Root != nil {
		renumber(ex)
	}
	return ex, nil
}

// work refines open leaves on c until the refinement is done.
func (r *refiner) work(ctx context.Context, c *symex.Checker) {
	for {
		r.mu.Lock()
		var n *rnode
		for n == nil {
			switch {
			case r.done:
				r.mu.Unlock()
				return
			case ctx.Err() != nil:
				r.stopped, r.done = true, true
				r.wake.Broadcast()
				r.mu.Unlock()
				return
			case len(r.open) > 0 && r.wanted(r.open[0]):
				n = heap.Pop(&r.open).(*rnode)
				r.busy++
			case r.busy == 0:
				r.done = true
				r.wake.Broadcast()
				r.mu.Unlock()
				return
			default:
				r.wake.Wait()
			}
		}
		r.mu.Unlock()
		var sub *rnode
		err := fail.Guard(func() (err error) {
			sub, err = r.expand(ctx, c, n)
			return err
		})
		r.mu.Lock()
		r.busy--
		switch {
		case err != nil && ctx.Err() != nil:
			// The leaf stays open: the tree holds at the resolution reached.
			r.stopped, r.done = true, true
		case err != nil:
			if r.err == nil {
				r.err = err
			}
			r.done = true
		default:
			r.graft(n, sub)
		}
		r.wake.Broadcast()
		r.mu.Unlock()
	}
}

// wanted reports whether the widest open leaf n is refined (r.mu held).
func (r *refiner) wanted(n *rnode) bool {
	if n.s == nil {
		return true // the root
	}
	if m := r.opts.MaxPaths; m > 0 && r.paths+len(r.open)+r.busy >= m {
		r.stopped = true
		return false
	}
	w := n.s.width()
	if r.opts.Resolution > 0 {
		// A class returns the middle of its range: an open leaf narrower
		// than twice the resolution predicts its inputs within it.
		return w >= 2*r.opts.Resolution
	}
	return w > 0 && r.classes(r.root, math.Nextafter(w, math.Inf(1))) <= r.opts.Classes*spare
}

// expand explores below the open leaf n up to the next branch with more
// than one feasible side: its sides become open leaves. It returns the
// subtree that replaces n: that branch, a path to the sink, or nil when
// no way below n is feasible.
func (r *refiner) expand(ctx context.Context, c *symex.Checker, n *rnode) (*rnode, error) {
	g := r.x.g
	prefix, res := slices.Clip(n.edges), n.res
	node := g.Source
	if len(prefix) > 0 {
		node = g.Edges[prefix[len(prefix)-1]].To
	}
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if node == g.Sink {
			return &rnode{edges: prefix, res: res}, nil
		}
		outs := r.x.out[node]
		if len(outs) == 1 {
			prefix = append(prefix, outs[0])
			next, err := r.x.extend(ctx, c, prefix, res)
			if err != nil || next == smt.Unsat {
				return nil, err
			}
			res, node = next, g.Edges[outs[0]].To
			continue
		}
		side := func(i int) []int32 { return append(slices.Clip(prefix), outs[i]) }
		known, err := r.decide(ctx, c, prefix, outs, res)
		if err != nil {
			return nil, err
		}
		var feasible []int
		for i, k := range known {
			if k != smt.Unsat {
				feasible = append(feasible, i)
			}
		}
		switch len(feasible) {
		case 0:
			return nil, nil
		case 1:
			i := feasible[0]
			prefix, res, node = side(i), known[i], g.Edges[outs[i]].To
			continue
		}
		// A chain of two-way decisions, as Explore joins the sides.
		var out *rnode
		for k := len(feasible) - 1; k >= 0; k-- {
			i := feasible[k]
			leaf := &rnode{edges: side(i), res: known[i], open: true}
			if out == nil {
				out = leaf
				continue
			}
			cond, err := r.x.describe(c, side(i))
			if err != nil {
				return nil, err
			}
			out = &rnode{cond: cond, then: leaf, els: out}
		}
		return out, nil
	}
}

// decide decides every side of a branch below a feasible prefix, as
// cheaply as Explore does: by the last model, by inference, by a check.
func (r *refiner) decide(ctx context.Context, c *symex.Checker, prefix []int32, outs []int32, res smt.Result) ([]smt.Result, error) {
	side := func(i int) []int32 { return append(slices.Clip(prefix), outs[i]) }
	known := make([]smt.Result, len(outs))
	decided := make([]bool, len(outs))
	probed := false
	for i := range outs {
		ok, err := c.Probe(side(i))
		if err != nil {
			return nil, err
		}
		if ok {
			known[i], decided[i], probed = smt.Sat, true, true
			break
		}
	}
	if !probed && len(outs) == 2 {
		first, err := r.x.extend(ctx, c, side(0), res)
		if err != nil {
			return nil, err
		}
		known[0], decided[0] = first, true
		if first == smt.Unsat && c.TestOnly() {
			if known[1], decided[1], err = c.Infer(side(1), res); err != nil {
				return nil, err
			}
		}
	}
	for i := range outs {
		if decided[i] {
			continue
		}
		k, err := r.x.extend(ctx, c, side(i), res)
		if err != nil {
			return nil, err
		}
		known[i] = k
	}
	return known, nil
}

// graft puts the subtree sub in the place of the open leaf n (r.mu held).
func (r *refiner) graft(n, sub *rnode) {
	if sub == nil {
		r.prune(n)
		return
	}
	r.replace(n, sub)
	r.settle(sub)
}

// replace puts b where a is in the tree, and marks the branches above
// it for re-pricing.
func (r *refiner) replace(a, b *rnode) {
	p := a.parent
	b.parent = p
	switch {
	case p == nil:
		r.root = b
	case p.then == a:
		p.then = b
	default:
		p.els = b
	}
	for ; p != nil; p = p.parent {
		p.s = nil
	}
}

// prune removes an open leaf found infeasible: its branch becomes the
// other side.
func (r *refiner) prune(n *rnode) {
	p := n.parent
	if p == nil {
		r.root = nil
		return
	}
	other := p.then
	if other == n {
		other = p.els
	}
	r.replace(p, other)
}

// settle prices the leaves of a new subtree and queues its open ones.
func (r *refiner) settle(n *rnode) {
	if n.cond != nil {
		n.then.parent, n.els.parent = n, n
		r.settle(n.then)
		r.settle(n.els)
		return
	}
	unknown := n.res == smt.Unknown
	if n.open {
		pi := r.pr.priceBounded(Path{Edges: n.edges, Unknown: unknown})
		n.s = leafSpread(pi.Value, !unknown).join(leafSpread(pi.Upper.Value, false))
		n.s.paths = 1
		heap.Push(&r.open, n)
		return
	}
	r.paths++
	n.s = leafSpread(r.pr.price(n.edges, unknown).Value, !unknown)
}

// spread is the spread of a subtree, priced once per change below it.
func (r *refiner) spread(n *rnode) *spread {
	if n.s == nil {
		n.s = r.spread(n.then).join(r.spread(n.els))
	}
	return n.s
}

// classes counts the classes of the tree below n narrower than width
// (before tests are eliminated or coalesced: at most this many).
func (r *refiner) classes(n *rnode, width float64) int {
	switch {
	case n == nil:
		return 0
	case n.cond == nil:
		return 1
	case r.spread(n).width() < width:
		return 1
	}
	return r.classes(n.then, width) + r.classes(n.els, width)
}

// reached is the resolution the tree holds at: above half its widest
// open interval (r.mu held).
func (r *refiner) reached() float64 {
	w := 0.0
	if len(r.open) > 0 {
		w = width(r.open[0])
	}
	return w / 2
}

func (r *refiner) progress() Progress {
	w := r.reached()
	p := Progress{Paths: r.paths, Bounded: len(r.open) + r.busy, Unknown: int(r.x.unknown.Load()),
		Infeasible: int(r.x.infeasible.Load()), Checks: int(r.x.checks.Load()), Elapsed: time.Since(r.x.start), Resolution: w}
	if !math.IsInf(w, 1) {
		p.Classes = r.classes(r.root, math.Nextafter(2*w, math.Inf(1)))
	}
	return p
}

func (r *refiner) report(ctx context.Context) (stop func()) {
	return reportEvery(ctx, r.opts.Progress, func() Progress {
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.progress()
	})
}

// tree turns the refined tree into an Exploration's: open leaves become
// bounded paths.
func (r *refiner) tree(n *rnode, paths *[]Path) *Node {
	if n.cond != nil {
		return &Node{Cond: n.cond, Then: r.tree(n.then, paths), Else: r.tree(n.els, paths)}
	}
	*paths = append(*paths, Path{Edges: n.edges, Bounded: n.open, Unknown: n.res == smt.Unknown})
	return &Node{Path: len(*paths) - 1}
}
