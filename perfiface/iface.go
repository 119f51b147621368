package perfiface

import (
	"fmt"
	"math"
	"sort"

	"github.com/dpperf/dpperf/bpfprog"
	"github.com/dpperf/dpperf/cfg"
	"github.com/dpperf/dpperf/target"
)

// Metric names.
const (
	MetricInsns = "insns" // BPF instructions executed
	MetricMem   = "mem"   // memory accesses (loads and stores)
	MetricCost  = "cost"  // cost under a target, in its first component's unit
)

// Interface is the general-case performance interface of a program for
// one metric: the decision tree of its feasible paths, each with a
// formula.
type Interface struct {
	Program string // what was analysed, for headers
	Metric  string //
	Unit    string // "instructions", "accesses", or the target's unit
	Target  string // for MetricCost
	Paths   []PathInfo
	Root    *Node
	PCVs    []PCV
	Notes   []string // over-approximations; an interface built on them may list infeasible classes
	Partial bool     // the exploration stopped early: the tree is missing
	// MaxDepth is the exploration's decision bound (0: none) and Bounded
	// the number of leaves it cut there (PathInfo.Bounded).
	MaxDepth, Bounded int
	// Coarse marks an interface explored coarse first (Refine): its
	// bounded leaves are subtrees left unexplored because their interval
	// was narrow enough, and it holds at any resolution above Reached,
	// the widest of them. Stopped says the refinement ended early (time
	// limit, interrupt, leaf limit) at that resolution.
	Coarse, Stopped bool
	Reached         float64
	// WellFormed says that only packets with valid headers were
	// considered (symex.Options.WellFormed).
	WellFormed bool

	prog  *bpfprog.Program
	g     *cfg.Graph // the graph the paths' edges index
	meas  *measurer  // prices paths, also those of concrete runs (Diff)
	stats map[*Node]*spread
	texts map[*Cond]condText
	negs  map[*Cond]*Cond
	way   *ways               // of bounded leaves, once needed
	index map[string]int      // path key → path, for Locate
	cut   map[string]int      // a bounded leaf's prefix key → path
	cutAt map[cfg.NodeID]bool // nodes where bounded leaves' prefixes end
	steps []step              // the sweep of thresholds so far (resolution.go)
	elim  *items              // the paths' routes over constraints (eliminate.go)
}

// PathInfo is one path of an Interface.
type PathInfo struct {
	Metrics
	Value   Formula `json:"value"`             // the metric as a formula
	Unknown bool    `json:"unknown,omitempty"` // the solver could not rule it out
	// Bounded marks a subtree the exploration did not enter: Metrics and
	// Value are those of the cheapest way through the graph from where
	// it stopped, Upper those of the dearest; Edges is the prefix.
	Bounded bool      `json:"bounded,omitempty"`
	Upper   *PathInfo `json:"upper,omitempty"`
	Edges   []int32   `json:"-"`
}

// spread summarises the formulas of a subtree: the range of the constants
// and of each coefficient.
type spread struct {
	lo, hi   float64
	coef     map[string][2]float64
	paths    int
	possible bool // some path is certainly feasible
}

// width is the subtree's merge threshold: how far apart two of its paths'
// costs can be, with every PCV at 1.
func (s *spread) width() float64 {
	w := s.hi - s.lo
	for _, r := range s.coef {
		w += r[1] - r[0]
	}
	return w
}

// mid is the formula in the middle of the ranges: within width/2 of every
// path of the subtree.
func (s *spread) mid() Formula {
	f := Formula{Const: (s.lo + s.hi) / 2}
	for v, r := range s.coef {
		if c := (r[0] + r[1]) / 2; c != 0 {
			f.Terms = append(f.Terms, Term{Coef: c, Var: v})
		}
	}
	sort.Slice(f.Terms, func(i, j int) bool { return f.Terms[i].Var < f.Terms[j].Var })
	return f
}

// Build prices the paths of an exploration for a metric; t is required
// for MetricCost and gives the PCV terms.
func Build(ex *Exploration, metric string, t *target.Target, program string) (*Interface, error) {
	it, err := newInterface(ex.G, metric, t, program)
	if err != nil {
		return nil, err
	}
	it.Root, it.Notes, it.Partial, it.MaxDepth = ex.Root, ex.Notes, ex.Truncated, ex.MaxDepth
	it.Coarse, it.Stopped, it.WellFormed = ex.Coarse, ex.Stopped, ex.WellFormed
	for _, p := range ex.Paths {
		if p.Bounded {
			it.Paths = append(it.Paths, it.priceBounded(p))
			it.Bounded++
			continue
		}
		it.Paths = append(it.Paths, it.price(p.Edges, p.Unknown))
	}
	it.indexPaths()
	for _, p := range it.meas.pcvs {
		if metric == MetricCost { // the other metrics count BPF work only
			it.PCVs = append(it.PCVs, p)
		}
	}
	sort.Slice(it.PCVs, func(i, j int) bool { return it.PCVs[i].Var < it.PCVs[j].Var })
	if it.Root != nil {
		it.summarise(it.Root)
	}
	if it.Coarse {
		for n, s := range it.stats {
			if n.Leaf() && it.Paths[n.Path].Bounded {
				it.Reached = max(it.Reached, s.width())
			}
		}
	}
	return it, nil
}

// newInterface is an interface without paths: what prices them.
func newInterface(g *cfg.Graph, metric string, t *target.Target, program string) (*Interface, error) {
	it := &Interface{Program: program, Metric: metric,
		prog: g.Prog, g: g, stats: map[*Node]*spread{}, texts: map[*Cond]condText{}, negs: map[*Cond]*Cond{}}
	switch metric {
	case MetricInsns:
		it.Unit = "instructions"
	case MetricMem:
		it.Unit = "accesses"
	case MetricCost:
		if t == nil {
			return nil, fmt.Errorf("metric cost needs a target")
		}
		it.Target = t.Name
		it.Unit = t.Components[0].Unit
	default:
		return nil, fmt.Errorf("unknown metric %q (insns, mem, cost)", metric)
	}
	it.meas = newMeasurer(g, t)
	return it, nil
}

// price computes a path's metrics and its value under the metric.
func (it *Interface) price(edges []int32, unknown bool) PathInfo {
	pi := PathInfo{Metrics: it.meas.metrics(edges), Unknown: unknown, Edges: edges}
	switch it.Metric {
	case MetricInsns:
		pi.Value = Constant(float64(pi.Insns))
	case MetricMem:
		pi.Value = Constant(float64(pi.Mem()))
	default:
		pi.Value = pi.Cost
	}
	return pi
}

func (it *Interface) summarise(n *Node) *spread {
	if n.Leaf() {
		p := it.Paths[n.Path]
		s := leafSpread(p.Value, !p.Unknown)
		if p.Upper != nil {
			s = s.join(leafSpread(p.Upper.Value, false))
			s.paths = 1
		}
		it.stats[n] = s
		return s
	}
	s := it.summarise(n.Then).join(it.summarise(n.Else))
	it.stats[n] = s
	return s
}

func leafSpread(f Formula, possible bool) *spread {
	s := &spread{lo: f.Const, hi: f.Const, coef: map[string][2]float64{}, paths: 1, possible: possible}
	for _, t := range f.Terms {
		s.coef[t.Var] = [2]float64{t.Coef, t.Coef}
	}
	return s
}

// join is the spread of the union of a and b; a term missing from one
// side has coefficient 0 there.
func (a *spread) join(b *spread) *spread {
	s := &spread{lo: math.Min(a.lo, b.lo), hi: math.Max(a.hi, b.hi), coef: map[string][2]float64{},
		paths: a.paths + b.paths, possible: a.possible || b.possible}
	for _, x := range []*spread{a, b} {
		for v := range x.coef {
			s.coef[v] = [2]float64{}
		}
	}
	for v := range s.coef {
		ra, rb := a.coef[v], b.coef[v] // zero when missing
		s.coef[v] = [2]float64{math.Min(ra[0], rb[0]), math.Max(ra[1], rb[1])}
	}
	return s
}

// Threshold is one resolution at which the interface changes: at any
// resolution above Value (and up to the next threshold) it has Classes
// leaves and Lines lines of Python.
type Threshold struct {
	Value   float64 `json:"value"`
	Classes int     `json:"classes"`
	Lines   int     `json:"lines"`
}

// Thresholds returns the minimal set of resolution thresholds: the
// resolutions at which the interface changes (resolution.go), with the
// interface size just above each, and first the exact interface
// (resolution 0+: only equal costs merge). A coarse interface starts at
// Floor instead: finer thresholds lie in subtrees it did not explore.
func (it *Interface) Thresholds() []Threshold {
	if it.Root == nil {
		return nil
	}
	var out []Threshold
	for _, s := range it.used(math.Inf(1)) {
		out = append(out, Threshold{Value: s.value, Classes: s.classes, Lines: s.lines})
	}
	return out
}

// Choose returns the finest resolution at which a coarse interface has at
// most the given number of classes: a resolution just above one of its
// thresholds (the coarsest one when none has so few). For BPF
// instructions and accesses it is an integer, for costs a multiple of 0.1.
func (it *Interface) Choose(classes int) float64 {
	th := it.Thresholds()
	if len(th) == 0 {
		return it.Above(it.floor())
	}
	for _, t := range th {
		if t.Classes <= classes {
			return it.Above(t.Value)
		}
	}
	return it.Above(th[len(th)-1].Value)
}

// Above is a round resolution above a threshold: the view there is the
// one just above it, or coarser.
func (it *Interface) Above(t float64) float64 {
	if it.Metric == MetricCost {
		return math.Floor(t*10+1e-6)/10 + 0.1
	}
	return math.Floor(t+1e-9) + 1
}
