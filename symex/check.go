package symex

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

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
	notes  map[string]bool
	Checks int // solver checks of whole paths
	Folded int // paths refuted without the solver (a constant condition)
}

type level struct {
	st    *state
	depth int // solver scopes open after the edge
	names int // name counter after the edge
}

// Outcome is the verdict on one path.
type Outcome struct {
	Result smt.Result
	// Prefix is, for an unsatisfiable path, the length of the shortest
	// prefix found unsatisfiable: every path starting with edges[:Prefix]
	// is impossible too.
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
	s, err := smt.Start(opts.Solver)
	if err != nil {
		return nil, err
	}
	c := &Checker{g: g, s: s, opts: opts, notes: map[string]bool{}}
	err = s.Send(
		"(declare-const pkt0 "+arraySort+")",
		"(declare-const len (_ BitVec 64))",
		"(declare-const ifindex (_ BitVec 32))",
		"(declare-const rxq (_ BitVec 32))",
		fmt.Sprintf("(assert (! (bvuge len %s) :named base_0))", konst(64, uint64(opts.MinPacket)).s),
		fmt.Sprintf("(assert (! (bvule len %s) :named base_1))", konst(64, uint64(opts.MaxPacket)).s),
	)
	if err != nil {
		s.Close()
		return nil, err
	}
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
// solver timeout) must be treated as possibly satisfiable.
func (c *Checker) Check(ctx context.Context, edges []int32) (Outcome, error) {
	if err := c.load(edges); err != nil {
		var d *deadPrefix
		if ok := asDead(err, &d); ok {
			c.Folded++
			return Outcome{Result: smt.Unsat, Prefix: d.n}, nil
		}
		return Outcome{}, err
	}
	c.Checks++
	res, err := c.s.Check(ctx)
	if err != nil || res != smt.Unsat {
		return Outcome{Result: res, Prefix: len(edges)}, err
	}
	core, err := c.s.UnsatCore()
	if err != nil {
		return Outcome{}, err
	}
	prefix := 0
	for _, name := range core {
		if !strings.HasPrefix(name, "a") {
			continue
		}
		pos, err := strconv.Atoi(name[1:strings.IndexByte(name, '_')])
		if err == nil && pos+1 > prefix {
			prefix = pos + 1
		}
	}
	if prefix == 0 {
		prefix = len(edges)
	}
	return Outcome{Result: smt.Unsat, Prefix: prefix}, nil
}

type deadPrefix struct{ n int }

func (d *deadPrefix) Error() string { return fmt.Sprintf("prefix of %d edges is infeasible", d.n) }

func asDead(err error, d **deadPrefix) bool {
	x, ok := err.(*deadPrefix)
	if ok {
		*d = x
	}
	return ok
}

// load brings the solver to the assertions of edges, reusing the longest
// prefix shared with the previous path.
func (c *Checker) load(edges []int32) error {
	common := 0
	for common < len(c.path) && common < len(edges) && c.path[common] == edges[common] {
		common++
	}
	depth, names := 0, 0
	var st *state
	if common > 0 {
		l := c.levels[common-1]
		depth, names, st = l.depth, l.names, l.st
	}
	for c.s.Depth() > depth {
		if err := c.s.Pop(); err != nil {
			return err
		}
	}
	c.levels, c.path = c.levels[:common], c.path[:common]
	for i := common; i < len(edges); i++ {
		var ns *state
		if st == nil {
			ns = &state{}
		} else {
			ns = st.clone()
		}
		var out []string
		m := &machine{g: c.g, p: c.g.Prog, b: builder{out: &out, next: &names}, st: ns, pos: i, notes: c.notes}
		e := c.g.Edges[edges[i]]
		var err error
		if e.Kind == cfg.EdgeEntry {
			m.enter(term{w: 64, s: "len"})
		} else {
			err = m.edge(e)
		}
		if err == nil && !m.dead {
			err = m.body(e.To)
		}
		if err != nil {
			return err
		}
		if m.dead {
			return &deadPrefix{i + 1}
		}
		if len(out) > 0 {
			if err := c.s.Push(); err != nil {
				return err
			}
			if err := c.s.Send(out...); err != nil {
				return err
			}
		}
		c.levels = append(c.levels, level{st: ns, depth: c.s.Depth(), names: names})
		c.path = append(c.path, edges[i])
		st = ns
	}
	return nil
}
