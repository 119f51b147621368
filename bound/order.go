package bound

import (
	"math"
	"slices"

	"github.com/dpperf/dpperf/pathenum"
	"github.com/dpperf/dpperf/target"
)

// Metric is what the bound guarantees.
type Metric int

const (
	PacketRate Metric = iota // packets per second
	BitRate                  // bits per second, at each path's smallest packet
)

func (m Metric) String() string { return [...]string{"pps", "bps"}[m] }

// Path is one program path with its cost and throughput.
type Path struct {
	Edges      []int32    // edge indices of the graph, source first
	Cost       target.Vec // per component
	Rates      target.Vec // packets/s each component sustains on this path
	Rate       float64    // packets/s: the minimum over components
	Bottleneck int        // component index with the lowest rate
	Size       int        // smallest packet, bytes, the static analysis proves for the path
	Key        float64    // the metric's value: Rate, or Rate × 8 × Size
}

// instance is one longest-path enumeration: one component's cost, over the
// edges allowed for one packet size.
type instance struct {
	k    int
	size int
	enum *pathenum.Enumerator
	head *pathenum.Path // next path, nil when exhausted
	gen  int            // the families (Ordered.gen) its graph leaves out
}

// Ordered enumerates the paths of a costed graph slowest-first by the
// metric. It runs one longest-path enumeration per component (and, for the
// bit rate, per distinct packet size the program checks) and interleaves
// them by the metric; a path is produced only by the enumeration of its
// bottleneck component and its own packet size, so each path comes out once.
type Ordered struct {
	c      *Costed
	metric Metric
	prune  *pathenum.PrefixSet
	topo   *pathenum.Graph // the costed graph's topology
	prod   *pathenum.Graph // the product graph without the families (Avoid)
	gen    int             // product graphs built
	last   *instance       // the enumeration that produced the last path
	inst   []*instance
	buf    []int32
	Seen   int // paths pulled from all enumerations, including discarded ones
}

// NewOrdered prepares the ordered enumeration of c's paths by packet rate.
func NewOrdered(c *Costed) (*Ordered, error) { return NewOrderedBy(c, PacketRate, nil) }

// NewOrderedBy prepares the ordered enumeration of c's paths by metric.
// With prune, paths starting with a prefix of the set are skipped.
func NewOrderedBy(c *Costed, metric Metric, prune *pathenum.PrefixSet) (*Ordered, error) {
	o := &Ordered{c: c, metric: metric, prune: prune}
	g := c.G
	o.topo = &pathenum.Graph{Nodes: len(g.Nodes), Src: int32(g.Source), Dst: int32(g.Sink),
		From: make([]int32, len(g.Edges)), To: make([]int32, len(g.Edges)), Weight: make([]float64, len(g.Edges))}
	for i, e := range g.Edges {
		o.topo.From[i], o.topo.To[i] = int32(e.From), int32(e.To)
	}
	if err := o.start(o.topo); err != nil {
		return nil, err
	}
	return o, nil
}

// start begins the enumerations over topo, a graph whose edges are (or
// are labelled with) the edges of the costed graph.
func (o *Ordered) start(topo *pathenum.Graph) error {
	sizes := []int{o.c.T.MinPacket}
	if o.metric == BitRate {
		sizes = o.c.Sizes()
	}
	o.inst = o.inst[:0]
	for _, size := range sizes {
		for k := range o.c.T.Components {
			in := &instance{k: k, size: size}
			if err := o.enumerate(in, topo); err != nil {
				return err
			}
			o.inst = append(o.inst, in)
		}
	}
	return nil
}

// enumerate (re)starts in's enumeration over topo.
func (o *Ordered) enumerate(in *instance, topo *pathenum.Graph) error {
	g := o.c.G
	w := make([]float64, len(topo.From))
	for i := range w {
		e := i
		if topo.Label != nil {
			e = int(topo.Label[i])
		}
		w[i] = o.c.Edge[e][in.k]
		if o.metric == BitRate && int(g.Edges[e].MinLen) > in.size {
			w[i] = math.Inf(-1) // not on paths of this size
		}
	}
	pg := *topo
	pg.Weight = w
	e, err := pathenum.New(&pg)
	if err != nil {
		return err
	}
	if o.prune != nil {
		e.Prune(o.prune)
	}
	in.enum, in.gen = e, o.gen
	o.pull(in)
	return nil
}

// maxProduct caps the nodes of the graph Avoid enumerates, in multiples of
// the program's graph.
const maxProduct = 64

// Avoid makes the enumeration leave out the paths that take any of the
// edge sequences fams (families proven impossible, symex.Checker.Family):
// an enumeration restarts on a graph without them (pathenum.Avoid) when
// Refresh says so. It fails with pathenum.ErrTooLarge when the graph
// would be too large; the enumeration then goes on as it was.
func (o *Ordered) Avoid(fams [][]int32) error {
	pg, err := pathenum.Avoid(o.topo, fams, maxProduct*o.topo.Nodes)
	if err != nil {
		return err
	}
	o.prod = pg
	o.gen++
	return nil
}

// Refresh restarts the enumeration that produced the last path on a graph
// without the latest families (see Avoid), when it is not on one yet.
// Paths it produced before may come again, except those a pruned prefix
// covers. Enumerations restart only when they meet a family, so that the
// bit rate's many (one per packet size) do not all restart at every
// family.
func (o *Ordered) Refresh() error {
	in := o.last
	if in == nil || in.gen == o.gen {
		return nil
	}
	return o.enumerate(in, o.prod)
}

// Sizes lists the distinct smallest packet sizes of the graph's paths as
// far as its bounds checks show: the target's minimum and every larger
// length an edge proves.
func (c *Costed) Sizes() []int {
	sizes := []int{c.T.MinPacket}
	for _, e := range c.G.Edges {
		if int(e.MinLen) > c.T.MinPacket {
			sizes = append(sizes, int(e.MinLen))
		}
	}
	slices.Sort(sizes)
	return slices.Compact(sizes)
}

// PathSize is the smallest packet a path needs by the static analysis.
func (c *Costed) PathSize(edges []int32) int {
	size := c.T.MinPacket
	for _, e := range edges {
		size = max(size, int(c.G.Edges[e].MinLen))
	}
	return size
}

func (o *Ordered) pull(in *instance) {
	if p, ok := in.enum.Next(); ok && !math.IsInf(p.Cost, -1) {
		in.head = &p
		o.Seen++
	} else {
		in.head = nil
	}
}

// key is the metric of a path priced cost on component k at packet size.
func (o *Ordered) key(k, size int, cost float64) float64 {
	rate := math.Inf(1)
	if cost > 0 {
		rate = o.c.T.Components[k].Capacity / cost
	}
	if o.metric == BitRate {
		return rate * 8 * float64(size)
	}
	return rate
}

// Peek returns the metric of the next path, a lower bound on the metric of
// every path still to come; false when none is left.
func (o *Ordered) Peek() (float64, bool) {
	best, ok := math.Inf(1), false
	for _, in := range o.inst {
		if in.head != nil {
			best, ok = min(best, o.key(in.k, in.size, in.head.Cost)), true
		}
	}
	return best, ok
}

// Next returns the next slowest path, or false when every path has been
// produced.
func (o *Ordered) Next() (Path, bool) {
	for {
		var best *instance
		for _, in := range o.inst {
			if in.head == nil {
				continue
			}
			if best == nil || o.key(in.k, in.size, in.head.Cost) < o.key(best.k, best.size, best.head.Cost) {
				best = in
			}
		}
		if best == nil {
			return Path{}, false
		}
		o.buf = best.enum.Edges(*best.head, o.buf[:0])
		o.pull(best)
		o.last = best
		p := o.c.pathOf(o.buf, o.metric)
		if p.Bottleneck != best.k || (o.metric == BitRate && p.Size != best.size) {
			continue // produced again by its own instance
		}
		p.Edges = append([]int32(nil), o.buf...)
		return p, true
	}
}

// pathOf prices a path as the enumeration does: edge costs over-estimated
// for every path, the packet size under-estimated by the static analysis.
func (c *Costed) pathOf(edges []int32, metric Metric) Path {
	cost := c.PathCost(edges)
	return c.pathWith(cost, c.PathSize(edges), metric)
}

func (c *Costed) pathWith(cost target.Vec, size int, metric Metric) Path {
	p := Path{Cost: cost, Rates: c.T.Rate(cost), Size: size}
	p.Rate, p.Bottleneck = math.Inf(1), 0
	for k := range c.T.Components {
		if p.Rates[k] < p.Rate {
			p.Rate, p.Bottleneck = p.Rates[k], k
		}
	}
	p.Key = p.Rate
	if metric == BitRate {
		p.Key = p.Rate * 8 * float64(size)
	}
	return p
}

// Elements is the number of stored path prefixes across the enumerations.
func (o *Ordered) Elements() int {
	n := 0
	for _, in := range o.inst {
		n += in.enum.Elements()
	}
	return n
}
