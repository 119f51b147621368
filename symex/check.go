package symex

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/dpperf/dpperf/bpfprog"
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
	return fmt.Sprintf("values computed by more than %d operations (hashes) are taken as unconstrained while paths are checked; a path that needs a particular hash value may be impossible, and its example is solved with the exact values", n)
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
	ByModel  int
	notes    map[string]bool
	Checks   int         // solver checks, including those that find the refuted prefix
	Folded   int         // paths refuted without the solver (a constant condition)
	Restarts int         // solvers killed for overrunning their timeout
	ByLemma  int         // paths refuted by a lemma, without the solver
	ByFamily int         // paths refuted as members of a family proven impossible
	aux      *smt.Solver // tracks named assertions (unsat cores)
	fam      *smt.Solver // proves families (see Family)
	// foldMisses counts, by the edge a prefix folded at, the searches for
	// its family that found none (see learnFolded).
	foldMisses map[int32]int
	out        [][]int32 // out-edges of every node, for Family
	twins      map[edgeShape][]placed
	shapes     map[string][]int // first instructions of the nodes of each shape
	// Twins counts the families proven by extrapolation (see extrapolate).
	Twins int
	// PathTime and PrefixTime are the solver's time on whole paths and on
	// the search for refuted prefixes.
	PathTime, PrefixTime time.Duration
}

type level struct {
	st      *state
	text    []string // SMT commands of the edge
	names   int      // name counter after the edge
	asserts bool     // the edge adds a condition
	// testOnly: the only condition the edge adds is its branch test (the
	// node it enters asserts nothing, e.g. about a helper's result).
	testOnly bool
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
	c := &Checker{g: g, s: s, opts: opts, notes: map[string]bool{}, model: -1}
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
	if c.aux != nil {
		c.aux.Close()
	}
	if c.fam != nil {
		c.fam.Close()
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
	if _, err := c.learn(ctx, hi, budget); err != nil && ctx.Err() == nil {
		return Outcome{}, err
	}
	return Outcome{Result: smt.Unsat, Prefix: hi}, nil
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

// checkAt checks the prefix of the loaded path with n edges, within limit
// (or the solver's own timeout when limit is 0). z3 does not always stop
// at its timeout, so a check that overruns it by far is killed (by
// package smt), the solver restarted, and the answer taken as Unknown.
func (c *Checker) checkAt(ctx context.Context, n int, limit time.Duration) (smt.Result, error) {
	if err := c.solverAt(n); err != nil {
		return smt.Unknown, err
	}
	c.Checks++
	c.model = -1
	res, err := c.s.CheckFor(ctx, limit) // limit 0: the solver's own
	if errors.Is(err, smt.ErrStalled) {
		return smt.Unknown, c.stalled(err, n)
	}
	c.keepModel(n, res, err)
	return res, err
}

// keepModel records that the solver holds a model of the first n levels.
func (c *Checker) keepModel(n int, res smt.Result, err error) {
	if err == nil && res == smt.Sat && c.inSolver == n {
		c.model = n
	}
}

// maxModelText caps the SMT text byModel sends in one evaluation.
const maxModelText = 1 << 16

// byModel reports whether the model of the solver's last check, which
// covers a shorter prefix, satisfies the first n levels: the levels the
// solver has not received are written as one let-expression (a constant
// declared there, which no earlier condition constrains, takes a fixed
// value of its sort, see zeroOf) and evaluated. A true answer proves the
// prefix satisfiable without a check; false decides nothing.
func (c *Checker) byModel(n int) (bool, error) {
	if c.model < 0 || c.inSolver != c.model || c.model > n {
		return false, nil
	}
	// The pending levels' definitions, and the ones the assertions need.
	type def struct {
		order int
		bind  string // "(name expr)"
		expr  string
	}
	defs := map[string]def{}
	var asserts []string
	size := 0
	for _, l := range c.levels[c.model:n] {
		for _, line := range l.text {
			switch {
			case strings.HasPrefix(line, "(define-fun "):
				f := strings.SplitN(line[len("(define-fun "):len(line)-1], " ", 3) // name, "()", sort and expression
				expr := f[2][sortLen(f[2]):]
				defs[f[0]] = def{len(defs), "(" + f[0] + expr + ")", expr}
			case strings.HasPrefix(line, "(declare-const "):
				name, sort, _ := strings.Cut(line[len("(declare-const "):len(line)-1], " ")
				defs[name] = def{len(defs), "(" + name + " " + zeroOf(sort) + ")", ""}
			case strings.HasPrefix(line, "(assert "):
				asserts = append(asserts, line[len("(assert "):len(line)-1])
			}
		}
	}
	if len(asserts) == 0 {
		return true, nil
	}
	need := uses(asserts, func(name string) (string, bool) {
		d, ok := defs[name]
		return d.expr, ok
	})
	for name := range need {
		size += len(defs[name].bind)
	}
	if size > maxModelText {
		return false, nil
	}
	binds := make([]def, 0, len(need))
	for name := range need {
		binds = append(binds, defs[name])
	}
	slices.SortFunc(binds, func(a, b def) int { return a.order - b.order })
	var b strings.Builder
	for _, d := range binds {
		b.WriteString("(let (" + d.bind + ")")
	}
	b.WriteString("(and true " + strings.Join(asserts, " ") + ")")
	b.WriteString(strings.Repeat(")", len(binds)))
	ok, err := c.s.Holds(b.String())
	if err != nil {
		return false, c.stalled(err, c.inSolver)
	}
	if ok {
		c.ByModel++
	}
	return ok, err
}

// sortLen is the length of the sort at the start of text (an atom or a
// parenthesised sort).
func sortLen(text string) int {
	if !strings.HasPrefix(text, "(") {
		i := strings.IndexByte(text, ' ')
		if i < 0 {
			return len(text)
		}
		return i
	}
	if i := smt.Closing(text); i >= 0 {
		return i + 1
	}
	return len(text)
}

// zeroOf is a value of a sort: false, a zero bit-vector, or for a byte
// array the received packet's bytes.
func zeroOf(sort string) string {
	switch {
	case sort == "Bool":
		return "false"
	case sort == arraySort:
		return "pkt0" // any array will do; QF_AUFBV has no constant arrays
	case strings.HasPrefix(sort, "(_ BitVec "):
		w, _ := strconv.Atoi(strings.TrimSuffix(sort[len("(_ BitVec "):], ")"))
		return konst(uint16(w), 0).s
	}
	return sort // not a sort we declare: the evaluation fails loudly
}

// stalled restarts a solver that stopped answering (smt.ErrStalled) with
// the first n levels loaded and returns nil: what was asked stays
// undecided. Other errors come back as they are.
func (c *Checker) stalled(err error, n int) error {
	if !errors.Is(err, smt.ErrStalled) {
		return err
	}
	c.Restarts++
	return c.restart(n)
}

// restart replaces a killed solver and loads the first n levels again.
func (c *Checker) restart(n int) error {
	c.s.Close()
	s, err := startSolver(c.opts, c.g.Maps)
	if err != nil {
		return err
	}
	c.s, c.inSolver, c.model = s, 0, -1
	return c.solverAt(n)
}

// startSolver starts a solver with the declarations every path shares.
func startSolver(opts Options, maps []*bpfprog.Map) (*smt.Solver, error) {
	cfg := opts.Solver
	cfg.LazyDefinitions = true // most definitions of a path are used by no assertion
	s, err := smt.Start(cfg)
	if err != nil {
		return nil, err
	}
	base := []string{
		"(declare-const pkt0 " + arraySort + ")",
		"(declare-const len (_ BitVec 64))",
		"(declare-const ifindex (_ BitVec 32))",
		"(declare-const rxq (_ BitVec 32))",
		fmt.Sprintf("(assert (bvuge len %s))", konst(64, uint64(opts.MinPacket)).s),
		fmt.Sprintf("(assert (bvule len %s))", konst(64, uint64(opts.MaxPacket)).s),
	}
	if opts.WellFormed {
		base = append(base, wellFormed()...)
	}
	err = s.Send(base...)
	if err != nil {
		s.Close()
		return nil, err
	}
	for i, spec := range maps {
		if spec != nil && spec.KeySize > 0 {
			has, val := contentNames(i, 0)
			if err := s.Send(declareContents(spec, has, val)...); err != nil {
				s.Close()
				return nil, err
			}
		}
	}
	return s, nil
}

// solverAt brings the solver to the assertions of the first n levels.
func (c *Checker) solverAt(n int) error {
	if c.inSolver != n {
		c.model = -1
	}
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

// satByModel reports whether the first n levels are known satisfiable or
// the model of the last check satisfies them, and records it.
func (c *Checker) satByModel(n int) (bool, error) {
	if c.knownSat >= n {
		return true, nil
	}
	ok, err := c.byModel(n)
	if ok {
		c.knownSat = n
	}
	return ok, err
}

// Extend loads a path prefix (edges from the source; the previous prefix's
// states are reused) and, when its last edge adds a condition, asks the
// solver whether some input drives the program along it. decided is false
// when the last edge adds nothing: the prefix is then exactly as feasible
// as the one before it, which the caller already knows. A condition that
// folds to false answers Unsat without the solver.
func (c *Checker) Extend(ctx context.Context, edges []int32) (res smt.Result, decided bool, err error) {
	if dead, err := c.loadLive(ctx, edges); dead || err != nil {
		return smt.Unsat, dead, err
	}
	n := len(edges)
	if n == 0 || !c.levels[n-1].asserts {
		return smt.Unknown, false, nil
	}
	if ok, err := c.satByModel(n); err != nil {
		return smt.Unknown, false, err
	} else if ok {
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
	return c.satByModel(len(edges))
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
	case s.hv != nil:
		m.havocRegion(s.hv)
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
