package cfg

import (
	"encoding/binary"
	"fmt"
)

// PathOf maps an executed instruction path (indices into Prog.Insns, in
// execution order, as the interpreter records them) onto the graph: it
// returns the indices into g.Edges of the source-to-sink path the run
// followed. From the source, each node's block must be the next
// instructions of insns, and exactly one out-edge must lead to the node
// holding the instruction that follows (calls enter their own callee copy,
// unrolled loops their own iteration copy, so the choice is unique when
// the graph is the expansion of the program that ran).
//
// It returns an error, naming the step, when the path leaves the graph: an
// instruction the current node does not hold, no edge or two edges to the
// next instruction, or a path that runs past the sink (a loop unrolled
// fewer times than it ran). Cost is linear in len(insns) after
// O(len(g.Edges)) to index the graph; a Pather keeps the index for many
// paths.
func PathOf(g *Graph, insns []int32) ([]int32, error) {
	return NewPather(g).Path(insns)
}

// Pather maps many executed paths onto one graph.
type Pather struct {
	g   *Graph
	out [][]int32
}

// NewPather indexes g's out-edges.
func NewPather(g *Graph) *Pather { return &Pather{g: g, out: g.OutEdges()} }

// Path is PathOf on the Pather's graph.
func (pa *Pather) Path(insns []int32) ([]int32, error) {
	g, out := pa.g, pa.out
	var edges []int32
	cur, k := g.Source, 0
	for cur != g.Sink {
		if cur != g.Source {
			first, last := g.Insns(cur)
			for i := first; i <= last; i++ {
				if k >= len(insns) || int(insns[k]) != i {
					return nil, fmt.Errorf("path leaves the graph at step %d: node %d holds instructions %d..%d, the path has %s",
						k, cur, first, last, stepAt(insns, k))
				}
				k++
			}
		}
		next := int32(-1)
		for _, ei := range out[cur] {
			to := g.Edges[ei].To
			switch {
			case to == g.Sink:
				if k != len(insns) {
					continue
				}
			case k >= len(insns):
				continue
			default:
				if first, _ := g.Insns(to); first != int(insns[k]) {
					continue
				}
			}
			if next >= 0 && g.Edges[next].To != to {
				return nil, fmt.Errorf("path is ambiguous at step %d: node %d has two edges to instruction %s", k, cur, stepAt(insns, k))
			}
			if next < 0 {
				next = ei
			}
		}
		if next < 0 {
			return nil, fmt.Errorf("path leaves the graph after node %d at step %d (instruction %s)", cur, k, stepAt(insns, k))
		}
		edges = append(edges, next)
		cur = g.Edges[next].To
	}
	return edges, nil
}

func stepAt(insns []int32, k int) string {
	if k >= len(insns) {
		return "end of path"
	}
	return fmt.Sprint(insns[k])
}

// PathKey is a map key of a path given as its edge indices: equal for
// equal paths only.
func PathKey(edges []int32) string {
	b := make([]byte, 0, 4*len(edges))
	for _, e := range edges {
		b = binary.LittleEndian.AppendUint32(b, uint32(e))
	}
	return string(b)
}
