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
	// Abstract is the size (operations, written out as a tree) above
	// which a computed value is taken as unconstrained while paths are
	// checked: a hash the program computes makes a solver that must
	// invert it time out on every later branch. The abstraction only adds
	// paths (a bound stays valid, an interface may list a class no packet
	// reaches); Example restores the exact values. 0: DefaultAbstract;
	// negative: never.
	Abstract int
	// Lemmas, when set, collects the refuted windows of paths (see
	// Lemmas) and refutes later paths with them; Checkers of one search
	// share it.
	Lemmas *Lemmas
	// WellFormed restricts the received packet to well-formed headers
	// (see wellformed.go): a path that only a malformed packet takes is
	// refuted. A Lemmas store is for Checkers of one setting.
	WellFormed bool
	// Families, with Lemmas, proves for every learned core that no path
	// taking its edges can run (see Family) and records it in Lemmas, so
	// that an enumeration can leave all of those paths out.
	Families bool
}

// DefaultAbstract is the default Options.Abstract.
const DefaultAbstract = 400

func abstractNote(n uint32) string {
	return fmt.Sprintf("values computed by more than %d operations (hashes), and values computed from those by more than %d more, are taken as unconstrained while paths are checked; a path that needs a particular hash value may be impossible, and its example is solved with the exact values", n, n/hashedShare)
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
	// model is the length of the prefix whose satisfying model the solver
	// holds (its last check), or -1.
	model int
	// ByModel counts prefixes found satisfiable by the model of an
	// earlier check, without a check of their own.
	ByModel    int
	notes      map[string]bool
	Checks     int         // solver checks, including those that find the refuted prefix
	Folded     int         // paths refuted without the solver (a constant condition)
	Restarts   int         // solvers killed for overrunning their timeout
	ByLemma    int         // paths refuted by a lemma, without the solver
	ByFamily   int         // paths refuted as members of a family proven impossible
	coreSolver *smt.Solver // tracks named assertions (unsat cores)
	famSolver  *smt.Solver // proves families (see Family)
	// foldMisses counts, by the edge a prefix folded at, the searches for
	// its family that found none (see learnFolded).
	foldMisses map[int32]int
	out        [][]int32 // out-edges of every node, for Family
	twins      map[edgeShape][]placed
	shapes     map[string][]int // first instructions of the nodes of each shape
	// mc is what evaluations learned of the model of the last check.
	mc *modelCache
	// EvalFallbacks counts the prefixes byModel left to the solver's
	// evaluation, which Go's did not cover.
	EvalFallbacks int
	// Twins counts the families proven by extrapolation (see extrapolate).
	Twins int
	// wit is a witness of a prefix of the path (see witness.go), wenv
	// the environment its evaluations reuse; base holds the assertions
	// the solver receives at its start.
	wit  *witness
	wenv *witnessEnv
	base []*smt.Expr
	// unrepaired is the prefix length at which repair last failed on the
	// prefix's own new condition.
	unrepaired int
	// ByWitness and Repaired count the prefixes found satisfiable by the
	// witness as it was, and by the witness repaired.
	ByWitness, Repaired int
	// PathTime and PrefixTime are the solver's time on whole paths and on
	// the search for refuted prefixes.
	PathTime, PrefixTime time.Duration
	// uninverted holds the sets of hash equalities (abstractions) the
	// solver ran out of time solving on some path; Uninverted counts the
	// examples left approximate because their path tests one of them.
	uninverted map[string]bool
	Uninverted int
}

type level struct {
	st      *state
	text    []string // SMT commands of the edge
	names   int      // name counter after the edge
	asserts bool     // the edge adds a condition
	// testOnly: the only condition the edge adds is its branch test (the
	// node it enters asserts nothing, e.g. about a helper's result).
	testOnly bool
	// index and assertions are the level's names and assertions, read
	// on first use by evalByModel.
	index      levelIndex
	assertions *[]*smt.Expr
}

// Outcome is the verdict on one path.
type Outcome struct {
	Result smt.Result
	// Prefix is, for an unsatisfiable path, the length of its shortest
	// unsatisfiable prefix: every path starting with edges[:Prefix] is
	// impossible too.
	Prefix int
}

// withDefaults fills in the packet sizes opts leaves at zero.
func (opts Options) withDefaults() Options {
	if opts.MinPacket <= 0 {
		opts.MinPacket = 60
	}
	if opts.MaxPacket <= 0 {
		opts.MaxPacket = DefaultMaxPacket
	}
	return opts
}

// NewChecker starts a solver for paths of g.
func NewChecker(g *cfg.Graph, opts Options) (*Checker, error) {
	opts = opts.withDefaults()
	if opts.MaxPacket < opts.MinPacket {
		return nil, fmt.Errorf("largest packet %d B is below the smallest %d B", opts.MaxPacket, opts.MinPacket)
	}
	s, err := startSolver(opts, g.Maps)
	if err != nil {
		return nil, err
	}
	base, err := baseAssertions(opts)
	if err != nil {
		s.Close()
		return nil, err
	}
	c := &Checker{g: g, s: s, opts: opts, notes: map[string]bool{}, model: -1, base: base}
	return c, nil
}

func (c *Checker) abstract() uint32 {
	switch {
	case c.opts.Abstract < 0:
		return 0
	case c.opts.Abstract == 0:
		return DefaultAbstract
	}
	return uint32(c.opts.Abstract)
}

// Close stops the solvers.
func (c *Checker) Close() error {
	if c.coreSolver != nil {
		c.coreSolver.Close()
	}
	if c.famSolver != nil {
		c.famSolver.Close()
	}
	return c.s.Close()
}

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
	if ls := c.opts.Lemmas; ls != nil && c.opts.Families {
		if err := c.provePending(ctx, 200*time.Millisecond); err != nil {
			return Outcome{}, err
		}
		if out, ok := c.inFamily(edges); ok {
			return out, nil
		}
	}
	if err := c.load(ctx, edges); err != nil {
		var d *deadPrefix
		if errors.As(err, &d) {
			c.Folded++
			c.learnFolded(edges[:d.n])
			return Outcome{Result: smt.Unsat, Prefix: d.n}, nil
		}
		return Outcome{}, err
	}
	if n := c.refutedByLemma(); n > 0 {
		c.ByLemma++
		return Outcome{Result: smt.Unsat, Prefix: n}, nil
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
	// Another worker may have proven a family of this path while it was
	// checked: nothing is left to learn from it.
	if out, ok := c.inFamily(edges); ok {
		return out, nil
	}
	// Shorter prefixes are less constrained; proving one satisfiable can
	// take far longer than refuting the path did (think of a hash the
	// solver must invert), so the whole search gets a few times the full
	// check's time. When it runs out, the shortest prefix refuted so far
	// is pruned: less than possible, but correct.
	budget := refuteBudget(time.Since(start))
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
	if _, err := c.learn(ctx, hi, budget); err != nil && ctx.Err() == nil {
		return Outcome{}, err
	}
	return Outcome{Result: smt.Unsat, Prefix: hi}, nil
}

// refuteBudget is the time given to the work that follows a refutation
// that took the solver d (its shortest prefix, its unsat core): a few
// times d, and never less than 50 ms.
func refuteBudget(d time.Duration) time.Duration {
	return max(4*d, 50*time.Millisecond)
}

// inFamily refutes a path that a family proven impossible holds, with the
// shortest prefix that takes the family's edges.
func (c *Checker) inFamily(edges []int32) (Outcome, bool) {
	ls := c.opts.Lemmas
	if ls == nil || !c.opts.Families {
		return Outcome{}, false
	}
	n := ls.Covering(edges)
	if n == 0 {
		return Outcome{}, false
	}
	c.ByFamily++
	return Outcome{Result: smt.Unsat, Prefix: n}, true
}

// Extend loads a path prefix (edges from the source; the previous prefix's
// states are reused) and, when its last edge adds a condition, asks the
// solver whether some input drives the program along it. decided is false
// when the last edge adds nothing: the prefix is then exactly as feasible
// as the one before it, which the caller already knows. A condition that
// folds to false answers Unsat without the solver, and so does a prefix
// that a lemma refutes (Options.Lemmas); a prefix the solver refutes
// teaches a lemma.
func (c *Checker) Extend(ctx context.Context, edges []int32) (res smt.Result, decided bool, err error) {
	if dead, err := c.loadLive(ctx, edges); dead || err != nil {
		return smt.Unsat, dead, err
	}
	n := len(edges)
	if n == 0 || !c.levels[n-1].asserts {
		return smt.Unknown, false, nil
	}
	if ok, err := c.satByModel(n, true); err != nil {
		return smt.Unknown, false, err
	} else if ok {
		return smt.Sat, true, nil
	}
	if c.refutedByLemma() > 0 {
		c.ByLemma++
		return smt.Unsat, true, nil
	}
	start := time.Now()
	res, err = c.checkAt(ctx, n, 0)
	c.PathTime += time.Since(start)
	if res == smt.Unsat && err == nil {
		if _, err := c.learn(ctx, n, refuteBudget(time.Since(start))); err != nil && ctx.Err() == nil {
			return smt.Unknown, false, err
		}
	}
	if res == smt.Sat {
		c.knownSat = n
		if c.unrepaired == n {
			// The solver's model satisfies the condition the witness
			// could not be repaired to (a hash equal to a constant):
			// it becomes the witness at once, for the paths below.
			c.snapshot()
		}
	}
	c.unrepaired = 0
	return res, true, err
}

// Probe loads a path prefix, like Extend, and reports whether the model of
// the solver's last check shows it satisfiable, without a check of its
// own. False decides nothing.
func (c *Checker) Probe(edges []int32) (bool, error) {
	if err := c.load(context.Background(), edges); err != nil {
		if isDead(err) {
			return false, nil // left for Extend to count
		}
		return false, err
	}
	return c.satByModel(len(edges), false)
}

// TestOnly reports whether the last edge of the loaded path is a branch
// side whose only condition is its branch test.
func (c *Checker) TestOnly() bool {
	return len(c.levels) > 0 && c.levels[len(c.levels)-1].testOnly
}

// Infer loads edges whose last edge is one side of a two-way branch after
// the other side was refuted, both sides asserting nothing but their
// branch test (see TestOnly): a prefix that can run and cannot take one
// side takes the other, so when this side is test-only too, the prefix is
// exactly as satisfiable as the one before the branch (parent), and
// Infer says so without the solver. ok is false when it cannot tell; the
// caller then asks with Extend.
func (c *Checker) Infer(edges []int32, parent smt.Result) (res smt.Result, ok bool, err error) {
	if dead, err := c.loadLive(context.Background(), edges); dead || err != nil {
		return smt.Unsat, dead, err
	}
	if !c.TestOnly() || parent == smt.Unsat {
		return smt.Unknown, false, nil
	}
	if parent == smt.Sat {
		c.knownSat = len(edges)
	}
	return parent, true, nil
}
