package pathenum

import (
	"errors"
	"slices"
	"strconv"
	"strings"
)

// Avoid returns a graph whose source-to-sink paths are those of g that
// take none of the edge sequences pats (each in the order of the DAG,
// not necessarily adjacent), with Label giving every edge's edge in g (or
// g's own Label). It is the product of g with one small automaton per
// sequence: a node of the result is a node of g with the sequences a path
// to it has started and not yet finished or passed by, so that paths
// which differ only in choices no sequence mentions share their nodes,
// and a longest-path enumeration of the result skips every path of a
// family without meeting it. Weights are copied from g. The result has at
// most maxNodes nodes, or Avoid fails with ErrTooLarge.
func Avoid(g *Graph, pats [][]int32, maxNodes int) (*Graph, error) {
	out := make([][]int32, g.Nodes)
	for e := range g.From {
		out[g.From[e]] = append(out[g.From[e]], int32(e))
	}
	byFirst := map[int32][]int32{}
	for p, pat := range pats {
		if len(pat) == 0 {
			return nil, errors.New("pathenum: empty edge sequence")
		}
		byFirst[pat[0]] = append(byFirst[pat[0]], int32(p))
	}
	// Product nodes, created in the order of g's nodes: a node's copies are
	// complete once its predecessors (lower numbers) have been expanded.
	type pnode struct {
		v     int32
		state []progress
	}
	var nodes []pnode
	index := make([]map[string]int32, g.Nodes)
	find := func(v int32, st []progress) int32 {
		k := key(st)
		if index[v] == nil {
			index[v] = map[string]int32{}
		}
		if id, ok := index[v][k]; ok {
			return id
		}
		id := int32(len(nodes))
		index[v][k] = id
		nodes = append(nodes, pnode{v, st})
		return id
	}
	type pedge struct{ from, to, label int32 }
	var edges []pedge
	find(g.Src, nil)
	byNode := make([][]int32, g.Nodes) // product nodes of each node of g
	byNode[g.Src] = []int32{0}
	for v := int32(0); v < int32(g.Nodes); v++ {
		for _, id := range byNode[v] {
			for _, e := range out[v] {
				w := g.To[e]
				st, ok := advance(nodes[id].state, e, pats, byFirst, g.From, w)
				if !ok {
					continue // the edge completes a sequence
				}
				before := len(nodes)
				to := find(w, st)
				if int(to) == before {
					byNode[w] = append(byNode[w], to)
					if len(nodes) > maxNodes {
						return nil, ErrTooLarge
					}
				}
				edges = append(edges, pedge{id, to, e})
			}
		}
	}
	// Number the product nodes by their node of g (a topological order).
	order := make([]int32, len(nodes))
	n := int32(0)
	for v := range byNode {
		for _, id := range byNode[v] {
			order[id] = n
			n++
		}
	}
	r := &Graph{Nodes: int(n), Src: order[0], Dst: -1}
	if len(byNode[g.Dst]) > 0 {
		r.Dst = order[byNode[g.Dst][0]]
	}
	if r.Dst < 0 {
		// Every path completes a sequence: a lone sink that nothing reaches.
		r.Nodes++
		r.Dst = n
	}
	for _, pe := range edges {
		label := pe.label
		if g.Label != nil {
			label = g.Label[label]
		}
		r.From = append(r.From, order[pe.from])
		r.To = append(r.To, order[pe.to])
		r.Label = append(r.Label, label)
		r.Weight = append(r.Weight, g.Weight[pe.label])
	}
	return r, nil
}

// ErrTooLarge says a product graph would exceed its node limit.
var ErrTooLarge = errors.New("pathenum: product graph too large")

// progress is how far a path has followed sequence pat: its first j
// edges.
type progress struct{ pat, j int32 }

func key(st []progress) string {
	var b strings.Builder
	for _, p := range st {
		b.WriteString(strconv.Itoa(int(p.pat)))
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(int(p.j)))
		b.WriteByte(' ')
	}
	return b.String()
}

// advance moves state st along edge e into node w; false when e completes
// a sequence. Sequences whose next edge leaves a node before w can no
// longer be completed and are dropped.
func advance(st []progress, e int32, pats [][]int32, byFirst map[int32][]int32, from []int32, w int32) ([]progress, bool) {
	var next []progress
	for _, p := range st {
		pat := pats[p.pat]
		if pat[p.j] == e {
			p.j++
			if int(p.j) == len(pat) {
				return nil, false
			}
		}
		if from[pat[p.j]] >= w {
			next = append(next, p)
		}
	}
	for _, p := range byFirst[e] {
		pat := pats[p]
		if len(pat) == 1 {
			return nil, false
		}
		if from[pat[1]] >= w {
			next = append(next, progress{p, 1})
		}
	}
	slices.SortFunc(next, func(a, b progress) int { return int(a.pat - b.pat) })
	return next, true
}
