package pathenum

import "errors"

// Graph is an edge-weighted DAG. Nodes are 0..Nodes-1; every edge must go
// from a lower to a higher node number (a topological numbering).
type Graph struct {
	Nodes    int
	Src, Dst int32
	From, To []int32
	Weight   []float64
	// Label, when set, names each edge in the graph the paths are
	// reported in (see Avoid): Edges and pruning use labels.
	Label []int32
}

// label is the name of edge e in the paths reported.
func (g *Graph) label(e int32) int32 {
	if g.Label == nil {
		return e
	}
	return g.Label[e]
}

// elem is one path prefix in a node's list: its length, the edge it ends
// with and the index of the prefix it extends in the edge source's list.
type elem struct {
	cost float64
	edge int32
	idx  int32
	st   int32 // trie state of the prefix when pruning (see state)
	ver  int32 // PrefixSet version st was computed at, plus one; 0: never
}

type cand struct {
	cost float64
	edge int32
	idx  int32
}

// before orders candidates: longer first, then by index and edge so that
// the order is deterministic. Among prefixes of equal cost, taking the
// lowest index first makes a node's list alternate between its in-edges:
// consecutive paths then differ in their last choices and share long
// prefixes, which a checker that keeps the states of the previous path's
// prefix does not execute again.
func before(a, b cand) bool {
	if a.cost != b.cost {
		return a.cost > b.cost
	}
	if a.idx != b.idx {
		return a.idx < b.idx
	}
	return a.edge < b.edge
}

type candHeap []cand

func (h *candHeap) push(c cand) {
	*h = append(*h, c)
	q := *h
	for i := len(q) - 1; i > 0; {
		p := (i - 1) / 2
		if !before(q[i], q[p]) {
			break
		}
		q[i], q[p] = q[p], q[i]
		i = p
	}
}

func (h *candHeap) pop() cand {
	q := *h
	top := q[0]
	n := len(q) - 1
	q[0] = q[n]
	q = q[:n]
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < n && before(q[l], q[m]) {
			m = l
		}
		if l+1 < n && before(q[l+1], q[m]) {
			m = l + 1
		}
		if m == i {
			break
		}
		q[i], q[m] = q[m], q[i]
		i = m
	}
	*h = q
	return top
}

// Enumerator yields the paths of a Graph longest first.
type Enumerator struct {
	g      *Graph
	in     [][]int32
	lists  []list
	heaps  []candHeap
	inited []bool
	refill []cand  // edge/idx whose next candidate is still owed; edge -1: none
	alias  []int32 // the only in-edge of a node, or -1: such a node keeps no list
	done   []bool  // list complete
	next   int32   // index of the next path at Dst
	prune  *PrefixSet
}

// New prepares an enumerator. It checks that edges respect the node order.
func New(g *Graph) (*Enumerator, error) {
	if len(g.From) != len(g.To) || len(g.From) != len(g.Weight) || g.Label != nil && len(g.Label) != len(g.From) {
		return nil, errors.New("pathenum: edge slices differ in length")
	}
	e := &Enumerator{
		g:      g,
		in:     make([][]int32, g.Nodes),
		lists:  make([]list, g.Nodes),
		heaps:  make([]candHeap, g.Nodes),
		inited: make([]bool, g.Nodes),
		refill: make([]cand, g.Nodes),
		done:   make([]bool, g.Nodes),
		alias:  make([]int32, g.Nodes),
	}
	for i := range g.From {
		if g.From[i] >= g.To[i] {
			return nil, errors.New("pathenum: edges must go from lower to higher node numbers")
		}
		e.in[g.To[i]] = append(e.in[g.To[i]], int32(i))
	}
	for i := range e.refill {
		e.refill[i].edge = -1
		e.alias[i] = -1
		if len(e.in[i]) == 1 && int32(i) != g.Src {
			e.alias[i] = e.in[i][0]
		}
	}
	e.lists[g.Src].push(elem{cost: 0, edge: -1, idx: -1})
	e.inited[g.Src], e.done[g.Src] = true, true
	return e, nil
}

// get returns element k of node v's list, extending the list as needed.
func (e *Enumerator) get(v int32, k int32) (elem, bool) {
	if a := e.alias[v]; a >= 0 {
		// One in-edge: the list is the predecessor's, shifted by the weight.
		p, ok := e.get(e.g.From[a], k)
		return elem{cost: p.cost + e.g.Weight[a], edge: a, idx: k}, ok
	}
	for e.lists[v].len() <= k {
		if !e.extend(v) {
			return elem{}, false
		}
	}
	return *e.lists[v].at(k), true
}

// extend appends the next element to node v's list; false when exhausted.
func (e *Enumerator) extend(v int32) bool {
	if e.done[v] {
		return false
	}
	h := &e.heaps[v]
	if !e.inited[v] {
		e.inited[v] = true
		for _, ed := range e.in[v] {
			if p, ok := e.get(e.g.From[ed], 0); ok {
				h.push(cand{p.cost + e.g.Weight[ed], ed, 0})
			}
		}
	} else if r := e.refill[v]; r.edge >= 0 {
		e.refill[v].edge = -1
		if p, ok := e.get(e.g.From[r.edge], r.idx); ok {
			h.push(cand{p.cost + e.g.Weight[r.edge], r.edge, r.idx})
		}
	}
	if len(*h) == 0 {
		e.done[v] = true
		*h = nil
		return false
	}
	for {
		c := h.pop()
		e.refill[v] = cand{edge: c.edge, idx: c.idx + 1}
		if e.prune != nil && e.prune.step(e.state(e.g.From[c.edge], c.idx), e.g.label(c.edge)) == stDead {
			// A dead prefix: drop it and take the next candidate.
			if p, ok := e.get(e.g.From[c.edge], c.idx+1); ok {
				h.push(cand{p.cost + e.g.Weight[c.edge], c.edge, c.idx + 1})
			}
			e.refill[v].edge = -1
			if len(*h) == 0 {
				e.done[v] = true
				*h = nil
				return false
			}
			continue
		}
		e.lists[v].push(elem{cost: c.cost, edge: c.edge, idx: c.idx})
		return true
	}
}

// Path is one enumerated path: its total weight and its rank (0 for the
// longest).
type Path struct {
	Cost float64
	Rank int32
}

// Next returns the next longest path, or false when all have been
// produced. With pruning, paths that a dead prefix starts are skipped.
func (e *Enumerator) Next() (Path, bool) {
	el, ok := e.head()
	if !ok {
		return Path{}, false
	}
	p := Path{Cost: el.cost, Rank: e.next}
	e.next++
	return p, true
}

// Peek returns the cost of the next path without consuming it.
func (e *Enumerator) Peek() (float64, bool) {
	el, ok := e.head()
	return el.cost, ok
}

// head returns the next live path at Dst without consuming it.
func (e *Enumerator) head() (elem, bool) {
	for {
		el, ok := e.get(e.g.Dst, e.next)
		if !ok || e.prune == nil || e.state(e.g.Dst, e.next) != stDead {
			return el, ok
		}
		e.next++
	}
}

// Edges appends the edges of path p, source first, to dst.
func (e *Enumerator) Edges(p Path, dst []int32) []int32 {
	start := len(dst)
	v, k := e.g.Dst, p.Rank
	for v != e.g.Src {
		el, _ := e.get(v, k)
		dst = append(dst, e.g.label(el.edge))
		v, k = e.g.From[el.edge], el.idx
	}
	for i, j := start, len(dst)-1; i < j; i, j = i+1, j-1 {
		dst[i], dst[j] = dst[j], dst[i]
	}
	return dst
}

// Elements reports how many prefix elements the enumerator holds, a measure
// of its memory (24 bytes each).
func (e *Enumerator) Elements() int {
	n := 0
	for _, l := range e.lists {
		n += int(l.len())
	}
	return n
}
