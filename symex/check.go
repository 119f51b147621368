package symex

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/dpperf/dpperf/cfg"
	"github.com/dpperf/dpperf/smt"
)

// Options configure a Checker.
type Options struct {
	Solver smt.Config
	// MinPacket and MaxPacket bound the received packet's length in bytes.
	// Defaults: 60 (the Ethernet minimum without CRC) and 3520 (the largest
	// XDP frame in a 4 KiB page: 4096 - 256 headroom - 320 tailroom).
	MinPacket, MaxPacket int
}

// DefaultMaxPacket is the largest packet an XDP program sees with 4 KiB
// pages.
const DefaultMaxPacket = pageSize - xdpHeadroom - xdpTailroom

// Checker decides path by path whether a program path can run.
type Checker struct {
	g      *cfg.Graph
	s      *smt.Solver
	opts   Options
	path   []int32 // edges whose states levels holds
	levels []level
	// inSolver is how many levels the solver holds (a prefix of levels);
	// knownSat is how long a prefix of path is known satisfiable.
	inSolver, knownSat int
	notes              map[string]bool
	Checks             int // solver checks, including those that find the refuted prefix
	Folded             int // paths refuted without the solver (a constant condition)
	Restarts           int // solvers killed for overrunning their timeout
	// PathTime and PrefixTime are the solver's time on whole paths and on
	// the search for refuted prefixes.
	PathTime, PrefixTime time.Duration
}

type level struct {
	st      *state
	text    []string // SMT commands of the edge
	names   int      // name counter after the edge
	asserts bool     // the edge adds a condition
}

// Outcome is the verdict on one path.
type Outcome struct {
	Result smt.Result
	// Prefix is, for an unsatisfiable path, the length of its shortest
	// unsatisfiable prefix: every path starting with edges[:Prefix] is
	// impossible too.
	Prefix int
}

// NewChecker starts a solver for paths of g.
func NewChecker(g *cfg.Graph, opts Options) (*Checker, error) {
	if opts.MinPacket <= 0 {
		opts.MinPacket = 60
	}
	if opts.MaxPacket <= 0 {
		opts.MaxPacket = DefaultMaxPacket
	}
	if opts.MaxPacket < opts.MinPacket {
		return nil, fmt.Errorf("largest packet %d B is below the smallest %d B", opts.MaxPacket, opts.MinPacket)
	}
	s, err := startSolver(opts)
	if err != nil {
		return nil, err
	}
	c := &Checker{g: g, s: s, opts: opts, notes: map[string]bool{}}
	return c, nil
}

// Close stops the solver.
func (c *Checker) Close() error { return c.s.Close() }

// Notes lists the over-approximations the paths checked so far needed.
func (c *Checker) Notes() []string {
	var out []string
	for n := range c.notes {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Check decides whether a packet and map contents exist that drive the
// program along edges (a source-to-sink path of the graph). Unknown (a
// solver timeout) must be treated as possibly satisfiable. For an
// unsatisfiable path it finds the shortest unsatisfiable prefix by binary
// search over the prefixes (satisfiability only falls as a path grows),
// which z3 answers far faster than it produces unsat cores.
func (c *Checker) Check(ctx context.Context, edges []int32) (Outcome, error) {
	if err := c.load(edges); err != nil {
		var d *deadPrefix
		if errors.As(err, &d) {
			c.Folded++
			return Outcome{Result: smt.Unsat, Prefix: d.n}, nil
		}
		return Outcome{}, err
	}
	start := time.Now()
	res, err := c.checkAt(ctx, len(edges), 0)
	c.PathTime += time.Since(start)
	defer func(t time.Time) { c.PrefixTime += time.Since(t) }(time.Now())
	if err != nil || res != smt.Unsat {
		if res == smt.Sat {
			c.knownSat = len(edges)
		}
		return Outcome{Result: res, Prefix: len(edges)}, err
	}
	// Shorter prefixes are less constrained; proving one satisfiable can
	// take far longer than refuting the path did (think of a hash the
	// solver must invert), so the whole search gets a few times the full
	// check's time. When it runs out, the shortest prefix refuted so far
	// is pruned: less than possible, but correct.
	budget := max(4*time.Since(start), 50*time.Millisecond)
	deadline := time.Now().Add(budget)
	lo, hi := c.knownSat, len(edges) // prefix lo is satisfiable (or undecided), hi is not
	known := c.knownSat
	for hi-lo > 1 {
		left := time.Until(deadline)
		if left <= 0 {
			break
		}
		mid := lo + (hi-lo)/2
		for mid < hi-1 && !c.levels[mid-1].asserts {
			mid++ // a prefix ending without a new condition decides nothing new
		}
		res, err := c.checkAt(ctx, mid, left)
		if err != nil {
			return Outcome{}, err
		}
		switch res {
		case smt.Unsat:
			hi = mid
		case smt.Sat:
			lo, known = mid, mid
		default:
			lo = mid // unknown: keep the longer prefix, which is safe
		}
	}
	c.knownSat = known
	return Outcome{Result: smt.Unsat, Prefix: hi}, nil
}

// checkAt checks the prefix of the loaded path with n edges, within limit
// (or the solver's own timeout when limit is 0). z3 does not always stop
// at its timeout, so a check that overruns it by far is killed, the
// solver restarted, and the answer taken as Unknown.
func (c *Checker) checkAt(ctx context.Context, n int, limit time.Duration) (smt.Result, error) {
	if err := c.solverAt(n); err != nil {
		return smt.Unknown, err
	}
	c.Checks++
	if limit == 0 {
		limit = c.opts.Solver.Timeout
	}
	if limit <= 0 {
		return c.s.CheckFor(ctx, 0)
	}
	hard, cancel := context.WithTimeout(ctx, limit+limit/2+200*time.Millisecond)
	defer cancel()
	res, err := c.s.CheckFor(hard, limit)
	if err != nil && ctx.Err() == nil && hard.Err() != nil {
		c.Restarts++
		return smt.Unknown, c.restart(n)
	}
	return res, err
}

// restart replaces a killed solver and loads the first n levels again.
func (c *Checker) restart(n int) error {
	c.s.Close()
	s, err := startSolver(c.opts)
	if err != nil {
		return err
	}
	c.s, c.inSolver = s, 0
	return c.solverAt(n)
}

// startSolver starts a solver with the declarations every path shares.
func startSolver(opts Options) (*smt.Solver, error) {
	s, err := smt.Start(opts.Solver)
	if err != nil {
		return nil, err
	}
	err = s.Send(
		"(declare-const pkt0 "+arraySort+")",
		"(declare-const len (_ BitVec 64))",
		"(declare-const ifindex (_ BitVec 32))",
		"(declare-const rxq (_ BitVec 32))",
		fmt.Sprintf("(assert (bvuge len %s))", konst(64, uint64(opts.MinPacket)).s),
		fmt.Sprintf("(assert (bvule len %s))", konst(64, uint64(opts.MaxPacket)).s),
	)
	if err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// solverAt brings the solver to the assertions of the first n levels.
func (c *Checker) solverAt(n int) error {
	for c.inSolver > n {
		c.inSolver--
		if len(c.levels[c.inSolver].text) > 0 {
			if err := c.s.Pop(); err != nil {
				return err
			}
		}
	}
	for ; c.inSolver < n; c.inSolver++ {
		if err := c.send(c.levels[c.inSolver].text); err != nil {
			return err
		}
	}
	return nil
}

func (c *Checker) send(text []string) error {
	if len(text) == 0 {
		return nil
	}
	if err := c.s.Push(); err != nil {
		return err
	}
	return c.s.Send(text...)
}

type deadPrefix struct{ n int }

func (d *deadPrefix) Error() string { return fmt.Sprintf("prefix of %d edges is infeasible", d.n) }

// load executes edges symbolically, reusing the states of the longest
// prefix shared with the previous path, and brings the solver to them.
func (c *Checker) load(edges []int32) error {
	common := 0
	for common < len(c.path) && common < len(edges) && c.path[common] == edges[common] {
		common++
	}
	if err := c.solverAt(min(common, c.inSolver)); err != nil {
		return err
	}
	if err := c.solverAt(common); err != nil {
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
		l, err := c.step(st, names, edges[i], i)
		if err != nil {
			return err
		}
		if err := c.send(l.text); err != nil {
			return err
		}
		c.levels = append(c.levels, l)
		c.inSolver++
		c.path = append(c.path, edges[i])
		st, names = l.st, l.names
	}
	return nil
}

// Extend loads a path prefix (edges from the source; the previous prefix's
// states are reused) and, when its last edge adds a condition, asks the
// solver whether some input drives the program along it. decided is false
// when the last edge adds nothing: the prefix is then exactly as feasible
// as the one before it, which the caller already knows. A condition that
// folds to false answers Unsat without the solver.
func (c *Checker) Extend(ctx context.Context, edges []int32) (res smt.Result, decided bool, err error) {
	if err := c.load(edges); err != nil {
		var d *deadPrefix
		if errors.As(err, &d) {
			c.Folded++
			return smt.Unsat, true, nil
		}
		return smt.Unknown, false, err
	}
	n := len(edges)
	if n == 0 || !c.levels[n-1].asserts {
		return smt.Unknown, false, nil
	}
	if c.knownSat >= n {
		return smt.Sat, true, nil
	}
	start := time.Now()
	res, err = c.checkAt(ctx, n, 0)
	c.PathTime += time.Since(start)
	if res == smt.Sat {
		c.knownSat = n
	}
	return res, true, err
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
	var ns *state
	if st == nil {
		ns = &state{}
	} else {
		ns = st.clone()
	}
	var out []string
	m := &machine{g: c.g, p: c.g.Prog, b: builder{out: &out, next: &names, decided: ns.decided}, st: ns, notes: c.notes}
	e := c.g.Edges[edge]
	var err error
	if e.Kind == cfg.EdgeEntry {
		m.enter(term{w: 64, s: "len"})
		m.b.decided = ns.decided
	} else {
		err = m.edge(e)
	}
	if err == nil && !m.dead {
		err = m.body(e.To)
	}
	if err != nil {
		return level{}, err
	}
	if m.dead {
		return level{}, &deadPrefix{i + 1}
	}
	return level{st: ns, text: out, names: names, asserts: m.asserted}, nil
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
