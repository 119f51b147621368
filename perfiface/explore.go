package perfiface

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dpperf/dpperf/cfg"
	"github.com/dpperf/dpperf/internal/fail"
	"github.com/dpperf/dpperf/smt"
	"github.com/dpperf/dpperf/symex"
)

// MinPacket is the shortest packet an interface covers by default: the
// kernel hands XDP anything from an Ethernet header up (BPF_PROG_TEST_RUN
// too), so runts are inputs like any other.
const MinPacket = 14

// ExploreOptions configure the path exploration.
type ExploreOptions struct {
	Check   symex.Options
	Workers int // solver processes; default 1
	// MaxPaths stops the exploration after this many feasible paths (0:
	// no limit); the result is then marked truncated.
	MaxPaths int
	// MaxDepth bounds the decisions (branches with more than one
	// feasible side) explored along a path (0: no bound). A branch point
	// below MaxDepth decisions with more than one feasible side is not
	// explored: it becomes a bounded leaf, priced by the cheapest and the
	// dearest ways through the graph from there (see Path.Bounded).
	MaxDepth int
	// Progress, if set, is called about every 200 ms during the search.
	Progress func(Progress)
	// NoLemmas switches off the lemmas (see checkOptions), to measure
	// what they save.
	NoLemmas bool
}

// Progress reports the state of an exploration.
type Progress struct {
	Paths      int // feasible paths found (including possibly feasible)
	Bounded    int // of which subtrees cut at MaxDepth
	Unknown    int // of which the solver could not decide
	Infeasible int // branches refuted
	Checks     int // solver checks
	Elapsed    time.Duration
	// Of a coarse-first exploration (Refine): the classes of the tree at
	// the resolution reached, which is the widest open interval.
	Classes    int
	Resolution float64
}

// Node is a node of the decision tree: a branch whose both sides are
// feasible, or a leaf (one path).
type Node struct {
	// Branch point: the graph edges of the two sides (Then is the jump
	// taken), the condition under which Then runs and the solver's SMT text
	// of the prefix up to it.
	Then, Else *Node
	Cond       *Cond
	// Leaf: the index of its path in Exploration.Paths.
	Path int
}

// Leaf reports whether n is a leaf.
func (n *Node) Leaf() bool { return n.Cond == nil }

// Path is one feasible source-to-sink path.
type Path struct {
	// Edges runs from the source to the sink, or, for a bounded leaf,
	// from the source to the branch point where exploration stopped.
	Edges []int32
	// Bounded marks a subtree not explored (ExploreOptions.MaxDepth):
	// every input whose path starts with Edges belongs to it.
	Bounded bool
	// Unknown is set when the solver could not decide a condition on the
	// path: it may be infeasible.
	Unknown bool
}

// Exploration is the result of exploring a program.
type Exploration struct {
	G     *cfg.Graph
	Root  *Node // nil when no path is feasible
	Paths []Path
	// Truncated is set when the search stopped at MaxPaths or by the
	// context: Root then holds only the subtrees it finished, and a branch
	// with one side unfinished shows as the other side alone.
	Truncated bool
	// MaxDepth is ExploreOptions.MaxDepth; Progress.Bounded says how
	// many leaves it cut.
	MaxDepth int
	// Coarse marks a coarse-first exploration (Refine): bounded leaves
	// are subtrees whose interval was narrow enough. Stopped says it
	// ended before the resolution or class count it aimed at.
	Coarse, Stopped bool
	Progress        Progress
	// WellFormed is ExploreOptions.Check.WellFormed: only packets with
	// valid headers were considered.
	WellFormed bool
	Notes      []string // over-approximations of the symbolic executor
}

// errLimit stops the workers when MaxPaths is reached.
var errLimit = errors.New("path limit reached")

type explorer struct {
	g     *cfg.Graph
	out   [][]int32
	opts  ExploreOptions
	start time.Time

	mu      sync.Mutex
	paths   []Path
	notes   map[string]bool
	pending tasks         // sides left for later, unclaimed
	wake    chan struct{} // closed when a side is left

	stop func() // ends the search at MaxPaths

	translators translators // by checker, for describe

	unknown, infeasible, checks, bounded atomic.Int64
	limitHit                             atomic.Bool
}

// checkOptions are the checker options of one exploration: the packet's
// shortest length, and one store of lemmas that the exploration's
// workers share, so that a contradiction the solver found on one path
// refutes the paths that repeat it without the solver (symex.Lemmas; on
// Katran's balancer_ingress_v4 they refute 1,772 of 2,050 branch sides
// that went to the solver).
func checkOptions(o symex.Options, noLemmas bool) symex.Options {
	if o.MinPacket == 0 {
		o.MinPacket = MinPacket
	}
	if o.Lemmas == nil && !noLemmas {
		o.Lemmas = &symex.Lemmas{}
	}
	return o
}

// Explore finds every feasible path of g and builds their decision tree.
// It stops early, with the paths found so far and Truncated set, when the
// context ends or MaxPaths is reached.
func Explore(ctx context.Context, g *cfg.Graph, opts ExploreOptions) (*Exploration, error) {
	workers := max(opts.Workers, 1)
	opts.Check = checkOptions(opts.Check, opts.NoLemmas)
	x := &explorer{g: g, out: g.OutEdges(), opts: opts, start: time.Now(), notes: map[string]bool{},
		wake: make(chan struct{})}
	var checkers []*symex.Checker
	defer func() {
		for _, c := range checkers {
			c.Close()
		}
	}()
	for range workers {
		c, err := symex.NewChecker(g, opts.Check)
		if err != nil {
			return nil, err
		}
		checkers = append(checkers, c)
	}
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	x.stop = cancel
	stopProgress := x.report(sctx)
	end := make(chan struct{})
	var wg sync.WaitGroup
	for _, c := range checkers[1:] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			x.serve(sctx, c, end)
		}()
	}
	var root *Node
	err := fail.Guard(func() (err error) {
		root, err = x.dfs(sctx, checkers[0], nil, g.Source, smt.Sat, 0)
		return err
	})
	close(end)
	wg.Wait()
	stopProgress()
	truncated := false
	if err != nil {
		if !errors.Is(err, errLimit) && !x.limitHit.Load() && ctx.Err() == nil {
			return nil, err
		}
		truncated = true // the tree holds the subtrees finished before the stop
	}
	ex := &Exploration{G: g, Root: root, Paths: x.paths, Truncated: truncated, MaxDepth: opts.MaxDepth, Progress: x.progress(), WellFormed: opts.Check.WellFormed}
	for _, c := range checkers {
		for _, n := range c.Notes() {
			x.notes[n] = true
		}
	}
	for n := range x.notes {
		ex.Notes = append(ex.Notes, n)
	}
	slices.Sort(ex.Notes)
	if root != nil {
		renumber(ex)
	}
	return ex, nil
}

func (x *explorer) progress() Progress {
	x.mu.Lock()
	n := len(x.paths)
	x.mu.Unlock()
	return Progress{Paths: n, Bounded: int(x.bounded.Load()), Unknown: int(x.unknown.Load()), Infeasible: int(x.infeasible.Load()),
		Checks: int(x.checks.Load()), Elapsed: time.Since(x.start)}
}

func (x *explorer) report(ctx context.Context) (stop func()) {
	return reportEvery(ctx, x.opts.Progress, x.progress)
}

// reportEvery sends progress() to show every 200 ms until ctx ends or
// the returned stop is called (which waits for the last report).
func reportEvery(ctx context.Context, show func(Progress), progress func() Progress) (stop func()) {
	if show == nil {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				show(progress())
			case <-done:
				return
			case <-ctx.Done():
				return
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

// extend adds edge e to prefix on checker c and decides the new prefix,
// inheriting the parent's answer when the edge adds no condition.
func (x *explorer) extend(ctx context.Context, c *symex.Checker, prefix []int32, parent smt.Result) (smt.Result, error) {
	before := c.Checks
	res, decided, err := c.Extend(ctx, prefix)
	x.checks.Add(int64(c.Checks - before))
	if err != nil {
		return smt.Unknown, err
	}
	if !decided {
		return parent, nil
	}
	switch res {
	case smt.Unsat:
		x.infeasible.Add(1)
	case smt.Unknown:
		if parent != smt.Unknown {
			x.unknown.Add(1)
		}
	}
	return res, nil
}

// dfs explores the subtree below a feasible prefix ending at node, which
// has depth decisions above it.
func (x *explorer) dfs(ctx context.Context, c *symex.Checker, prefix []int32, node cfg.NodeID, res smt.Result, depth int) (*Node, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if node == x.g.Sink {
			return x.leaf(prefix, res, false)
		}
		outs := x.out[node]
		if len(outs) == 1 {
			prefix = append(prefix, outs[0])
			r, err := x.extend(ctx, c, prefix, res)
			if err != nil || r == smt.Unsat {
				return nil, err
			}
			res, node = r, x.g.Edges[outs[0]].To
			continue
		}
		return x.branch(ctx, c, prefix, node, res, depth)
	}
}

// branch explores the sides of a node with several out-edges. Sides are
// decided cheaply where they can be: by the model of the last check (a
// side it satisfies is feasible, see symex.Checker.Probe), or, for a
// two-way branch whose first side is refuted, by inference
// (symex.Checker.Infer). The side decided on c is explored on c, which
// keeps the model; when a solver is idle, another side goes to it in
// parallel.
func (x *explorer) branch(ctx context.Context, c *symex.Checker, prefix []int32, node cfg.NodeID, res smt.Result, depth int) (*Node, error) {
	outs := x.out[node]
	kids := make([]*Node, len(outs))
	errs := make([]error, len(outs))
	side := func(i int) []int32 { return append(slices.Clip(prefix), outs[i]) }
	known := make([]smt.Result, len(outs)) // a side's result, where decided[i]
	decided := make([]bool, len(outs))
	first := -1 // the side decided on c, explored there first
	for i := range outs {
		ok, err := c.Probe(side(i))
		if err != nil {
			return nil, err
		}
		if ok {
			known[i], decided[i], first = smt.Sat, true, i
			break
		}
	}
	if first < 0 && len(outs) == 2 {
		r, err := x.extend(ctx, c, side(0), res)
		if err != nil {
			return nil, err
		}
		known[0], decided[0], first = r, true, 0
		if r == smt.Unsat && c.TestOnly() {
			if known[1], decided[1], err = c.Infer(side(1), res); err != nil {
				return nil, err
			}
			first = 1
		}
	}
	// The first side runs here; the others are left for idle workers
	// and awaited.
	refuted := func(i int) bool { return decided[i] && known[i] == smt.Unsat }
	if x.opts.MaxDepth > 0 {
		// Decide every side, so that depth counts decisions exactly: a
		// branch with one feasible side is no decision.
		for i := range outs {
			if decided[i] {
				continue
			}
			r, err := x.extend(ctx, c, side(i), res)
			if err != nil {
				return nil, err
			}
			known[i], decided[i] = r, true
		}
		feasible := 0
		for i := range outs {
			if !refuted(i) {
				feasible++
			}
		}
		if feasible > 1 && depth >= x.opts.MaxDepth {
			return x.leaf(prefix, res, true)
		}
	}
	next := depth
	var order []int
	if first >= 0 && !refuted(first) {
		order = append(order, first)
	}
	for i := range outs {
		if i != first && !refuted(i) {
			order = append(order, i)
		}
	}
	if len(order) > 1 {
		next++ // (without MaxDepth, a side not decided yet may still be refuted)
	}
	ts := make([]*task, len(outs))
	for k, i := range order {
		ts[i] = &task{edges: side(i), parent: res, depth: next, decided: decided[i], result: known[i],
			claimed: k == 0, done: make(chan struct{})}
		if k > 0 {
			x.leave(ts[i])
		}
	}
	for k, i := range order {
		if k == 0 {
			x.run(ctx, c, ts[i])
		} else {
			x.await(ctx, c, ts[i])
		}
		kids[i], errs[i] = ts[i].node, ts[i].err
	}
	// A stopped search keeps the subtrees it finished: the partial tree is
	// reported as such.
	var stop error
	for _, err := range errs {
		switch {
		case err == nil:
		case errors.Is(err, errLimit) || ctx.Err() != nil || x.limitHit.Load():
			// The solver's error on a cancelled context is whatever the
			// killed process left; the context says it was a stop.
			stop = err
		default:
			return nil, err
		}
	}
	// Join the feasible sides: a chain of two-way decisions, the first
	// out-edge's condition deciding between it and the rest.
	var out *Node
	for i := len(outs) - 1; i >= 0; i-- {
		if kids[i] == nil {
			continue
		}
		if out == nil {
			out = kids[i]
			continue
		}
		cond, err := x.describe(c, append(slices.Clip(prefix), outs[i]))
		if err != nil {
			return nil, err
		}
		out = &Node{Cond: cond, Then: kids[i], Else: out}
	}
	return out, stop
}

// leaf records a path, or a bounded subtree below prefix.
func (x *explorer) leaf(prefix []int32, res smt.Result, bounded bool) (*Node, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.opts.MaxPaths > 0 && len(x.paths) >= x.opts.MaxPaths {
		x.limitHit.Store(true)
		x.stop()
		return nil, errLimit
	}
	if bounded {
		x.bounded.Add(1)
	}
	x.paths = append(x.paths, Path{Edges: slices.Clone(prefix), Bounded: bounded, Unknown: res == smt.Unknown})
	return &Node{Path: len(x.paths) - 1}, nil
}

// describe loads a prefix whose last edge is a branch side and turns its
// condition into a Cond.
func (x *explorer) describe(c *symex.Checker, prefix []int32) (*Cond, error) {
	text, err := c.Describe(prefix)
	if err != nil {
		return nil, fmt.Errorf("describing a branch: %w", err)
	}
	return newCond(x.g, prefix, text, x.translators.of(c).load(text)), nil
}

// renumber orders the paths as the tree's leaves appear, then-side first,
// so that path numbers do not depend on the workers' timing.
func renumber(ex *Exploration) {
	var order []int
	var walk func(n *Node)
	walk = func(n *Node) {
		if n.Leaf() {
			order = append(order, n.Path)
			n.Path = len(order) - 1
			return
		}
		walk(n.Then)
		walk(n.Else)
	}
	walk(ex.Root)
	paths := make([]Path, len(order))
	for i, old := range order {
		paths[i] = ex.Paths[old]
	}
	ex.Paths = paths
}
