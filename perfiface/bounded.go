package perfiface

import (
	"math"
	"slices"

	"github.com/dpperf/dpperf/cfg"
)

// A bounded leaf (ExploreOptions.MaxDepth) stands for a subtree that was
// not explored. Its inputs follow the leaf's prefix and then some way
// through the graph to the sink, feasible or not as the solver would have
// found: the cheapest and the dearest of all those ways bound the cost of
// every one of them. They are found by a longest- and a shortest-path
// pass over the DAG, each edge priced alone (with every PCV at 1), which
// for a target cost is at least what the edge costs on any path.

// ways holds, for every graph node, the next edge of the cheapest and of
// the dearest way from it to the sink, and the price of every edge alone.
type ways struct {
	one    []Formula
	lo, hi []int32 // -1 at the sink
}

func (it *Interface) ways() *ways {
	if it.way != nil {
		return it.way
	}
	g := it.g
	w := &ways{one: make([]Formula, len(g.Edges)), lo: make([]int32, len(g.Nodes)), hi: make([]int32, len(g.Nodes))}
	val := make([]float64, len(g.Edges))
	for e := range g.Edges {
		w.one[e] = it.price([]int32{int32(e)}, false).Value
		val[e] = atOne(w.one[e])
	}
	out := g.OutEdges()
	lo, hi := make([]float64, len(g.Nodes)), make([]float64, len(g.Nodes))
	for n := len(g.Nodes) - 1; n >= 0; n-- {
		w.lo[n], w.hi[n] = -1, -1
		if cfg.NodeID(n) == g.Sink {
			continue
		}
		lo[n], hi[n] = math.Inf(1), math.Inf(-1)
		for _, e := range out[n] {
			to := g.Edges[e].To
			if l := val[e] + lo[to]; l < lo[n] {
				lo[n], w.lo[n] = l, e
			}
			if h := val[e] + hi[to]; h > hi[n] {
				hi[n], w.hi[n] = h, e
			}
		}
	}
	it.way = w
	return w
}

// atOne is f with every PCV at 1.
func atOne(f Formula) float64 {
	v := f.Const
	for _, t := range f.Terms {
		v += t.Coef
	}
	return v
}

// complete extends prefix along next to the sink.
func (w *ways) complete(g *cfg.Graph, prefix []int32, next []int32) []int32 {
	path := slices.Clone(prefix)
	n := g.Edges[prefix[len(prefix)-1]].To
	for next[n] >= 0 {
		path = append(path, next[n])
		n = g.Edges[next[n]].To
	}
	return path
}

// priceBounded prices a bounded leaf: its metrics and value are those of
// the cheapest way, Upper those of the dearest, whose value is the sum of
// its edges priced alone.
func (it *Interface) priceBounded(p Path) PathInfo {
	w := it.ways()
	pi := it.price(w.complete(it.g, p.Edges, w.lo), p.Unknown)
	hiPath := w.complete(it.g, p.Edges, w.hi)
	up := it.price(hiPath, p.Unknown)
	up.Edges = nil
	sum := map[string]float64{}
	up.Value = Formula{}
	for _, e := range hiPath {
		f := w.one[e]
		up.Value.Const += f.Const
		for _, t := range f.Terms {
			sum[t.Var] += t.Coef
		}
	}
	up.Value.Terms = sortedTerms(sum)
	pi.Edges, pi.Bounded, pi.Upper = p.Edges, true, &up
	return pi
}

// Locate returns the path of the interface that an input which ran along
// edges (source to sink) belongs to: that path, or the bounded leaf whose
// prefix it starts with.
func (it *Interface) Locate(edges []int32) (int, bool) {
	if p, ok := it.index[cfg.PathKey(edges)]; ok {
		return p, true
	}
	if len(it.cutAt) == 0 {
		return 0, false
	}
	for i, e := range edges {
		if it.cutAt[it.g.Edges[e].To] {
			if p, ok := it.cut[cfg.PathKey(edges[:i+1])]; ok {
				return p, true
			}
		}
	}
	return 0, false
}

// runValue is the value of an input that ran along edges and belongs to
// path p: the path's formula, or, in a bounded subtree, that of its own
// way through it.
func (it *Interface) runValue(p int, edges []int32) Formula {
	if it.Paths[p].Bounded {
		return it.price(edges, false).Value
	}
	return it.Paths[p].Value
}

// indexPaths builds what Locate looks paths up in.
func (it *Interface) indexPaths() {
	it.index = make(map[string]int, len(it.Paths))
	it.cut, it.cutAt = map[string]int{}, map[cfg.NodeID]bool{}
	for i, p := range it.Paths {
		if !p.Bounded {
			it.index[cfg.PathKey(p.Edges)] = i
			continue
		}
		it.cut[cfg.PathKey(p.Edges)] = i
		it.cutAt[it.g.Edges[p.Edges[len(p.Edges)-1]].To] = true
	}
}
