package bound

import (
	"math"

	"github.com/dpperf/dpperf/pathenum"
	"github.com/dpperf/dpperf/target"
)

// Path is one program path with its cost and throughput.
type Path struct {
	Edges      []int32    // edge indices of the graph, source first
	Cost       target.Vec // per component
	Rates      target.Vec // packets/s each component sustains on this path
	Rate       float64    // packets/s: the minimum over components
	Bottleneck int        // component index with the lowest rate
}

// Ordered enumerates the paths of a costed graph slowest-first by packet
// rate over all components. It runs one longest-path enumeration per
// component and interleaves them by rate; a path is produced only by the
// enumeration of its bottleneck component, so each path comes out once.
type Ordered struct {
	c     *Costed
	enums []*pathenum.Enumerator
	heads []*pathenum.Path // next path of each enumeration, nil when exhausted
	buf   []int32
	Seen  int // paths pulled from all enumerations, including discarded ones
}

// NewOrdered prepares the ordered enumeration of c's paths.
func NewOrdered(c *Costed) (*Ordered, error) {
	o := &Ordered{c: c}
	g := c.G
	from := make([]int32, len(g.Edges))
	to := make([]int32, len(g.Edges))
	for i, e := range g.Edges {
		from[i], to[i] = int32(e.From), int32(e.To)
	}
	for k := range c.T.Components {
		w := make([]float64, len(g.Edges))
		for i := range w {
			w[i] = c.Edge[i][k]
		}
		e, err := pathenum.New(&pathenum.Graph{Nodes: len(g.Nodes), Src: int32(g.Source), Dst: int32(g.Sink), From: from, To: to, Weight: w})
		if err != nil {
			return nil, err
		}
		o.enums = append(o.enums, e)
		o.heads = append(o.heads, nil)
		o.pull(k)
	}
	return o, nil
}

func (o *Ordered) pull(k int) {
	if p, ok := o.enums[k].Next(); ok {
		o.heads[k] = &p
		o.Seen++
	} else {
		o.heads[k] = nil
	}
}

// rateOf converts a component cost into packets/s.
func (o *Ordered) rateOf(k int, cost float64) float64 {
	if cost <= 0 {
		return math.Inf(1)
	}
	return o.c.T.Components[k].Capacity / cost
}

// Next returns the next slowest path, or false when every path has been
// produced.
func (o *Ordered) Next() (Path, bool) {
	for {
		best := -1
		for k, h := range o.heads {
			if h == nil {
				continue
			}
			if best < 0 || o.rateOf(k, h.Cost) < o.rateOf(best, o.heads[best].Cost) {
				best = k
			}
		}
		if best < 0 {
			return Path{}, false
		}
		h := *o.heads[best]
		o.buf = o.enums[best].Edges(h, o.buf[:0])
		cost := o.c.PathCost(o.buf)
		p := Path{Cost: cost, Rates: o.c.T.Rate(cost)}
		p.Rate, p.Bottleneck = math.Inf(1), 0
		for k := range o.c.T.Components {
			if p.Rates[k] < p.Rate {
				p.Rate, p.Bottleneck = p.Rates[k], k
			}
		}
		o.pull(best)
		if p.Bottleneck != best {
			continue // produced again by its bottleneck's enumeration
		}
		p.Edges = append([]int32(nil), o.buf...)
		return p, true
	}
}

// Elements is the number of stored path prefixes across the enumerations.
func (o *Ordered) Elements() int {
	n := 0
	for _, e := range o.enums {
		n += e.Elements()
	}
	return n
}
