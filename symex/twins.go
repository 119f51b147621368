package symex

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cilium/ebpf/asm"

	"github.com/dpperf/dpperf/cfg"
)

// Unrolled loops repeat their code: a family proven for one iteration
// (a label that starts at byte 40 and is still running 64 bytes later) has
// a twin one iteration later, whose edges sit a fixed number of
// instructions further on. propose queues the twins of a proven family, in
// both directions, in the Lemmas store; every Checker of the search proves
// queued twins before its next path (provePending), and a proven twin
// queues its own twin in the same direction, for as long as every edge of
// the family has a twin at the same distance. The distance is only a guess
// at what repeats: each twin is proven on its own, so a wrong guess costs
// a check and never a wrong family.
func (c *Checker) propose(fam []int32, dirs ...int) {
	if c.twins == nil {
		c.indexEdges()
	}
	for _, dir := range dirs {
		if next := c.twin(fam, dir); next != nil {
			c.opts.Lemmas.queue(twin{next, dir})
		}
	}
}

// provePending proves the queued twins, each within budget.
func (c *Checker) provePending(ctx context.Context, budget time.Duration) error {
	ls := c.opts.Lemmas
	for ctx.Err() == nil {
		t, ok := ls.dequeue()
		if !ok {
			return nil
		}
		if !ls.claim(t) {
			continue
		}
		ok, err := c.Family(ctx, t.edges, budget)
		if err != nil {
			return err
		}
		if ok {
			ls.addFamily(t.edges)
			c.Twins++
			c.propose(t.edges, t.dir)
		}
	}
	return nil
}

// twin is a family to prove: a proven one's twin in direction dir.
type twin struct {
	edges []int32
	dir   int
}

// edgeShape is what a twin edge has in common with its edge: its kind
// and the opcode of the jump that leaves its source node (registers are
// allocated differently in different iterations, so the rest of the code
// may differ).
type edgeShape struct {
	jump asm.OpCode
	kind cfg.EdgeKind
}

func (c *Checker) edgeShape(e cfg.Edge) edgeShape {
	_, last := c.g.Insns(e.From)
	return edgeShape{c.g.Prog.Insns[last].OpCode, e.Kind}
}

// placed is an edge at the first instruction of its source node.
type placed struct {
	at   int
	edge int32
}

// indexEdges indexes the edges by shape, each shape's edges in the order of
// their instructions, and the nodes' first instructions by shape.
func (c *Checker) indexEdges() {
	c.twins = map[edgeShape][]placed{}
	c.shapes = map[string][]int{}
	shapeOf := make([]string, len(c.g.Nodes))
	for n := range c.g.Nodes {
		if c.g.Block(cfg.NodeID(n)) == nil {
			continue
		}
		first, _ := c.g.Insns(cfg.NodeID(n))
		shapeOf[n] = c.shape(cfg.NodeID(n))
		c.shapes[shapeOf[n]] = append(c.shapes[shapeOf[n]], first)
	}
	for i, e := range c.g.Edges {
		if shapeOf[e.From] == "" || shapeOf[e.To] == "" {
			continue
		}
		k := c.edgeShape(e)
		first, _ := c.g.Insns(e.From)
		c.twins[k] = append(c.twins[k], placed{first, int32(i)})
	}
	for _, firsts := range c.shapes {
		slices.Sort(firsts)
	}
	for _, ps := range c.twins {
		slices.SortFunc(ps, func(a, b placed) int { return a.at - b.at })
	}
}

// shape is a node's opcodes, registers and immediates left out.
func (c *Checker) shape(n cfg.NodeID) string {
	first, last := c.g.Insns(n)
	var b strings.Builder
	for i := first; i <= last; i++ {
		fmt.Fprintf(&b, "%x,", uint16(c.g.Prog.Insns[i].OpCode))
	}
	return b.String()
}

// twin returns the family one iteration after fam (dir 1) or before it
// (dir -1): the distance is that from the first edge's node to the nearest
// node of the same shape in that direction, and every edge is replaced by
// the edge of its shape nearest to that distance from it (iterations of
// unrolled code differ a little in length where registers were allocated
// differently); nil when an edge has none within half the distance.
func (c *Checker) twin(fam []int32, dir int) []int32 {
	e0 := c.g.Edges[fam[0]]
	if c.g.Block(e0.From) == nil {
		return nil
	}
	first, _ := c.g.Insns(e0.From)
	firsts := c.shapes[c.shape(e0.From)]
	i, found := slices.BinarySearch(firsts, first)
	j := i - 1
	if dir > 0 {
		j = i
		if found {
			j = i + 1
		}
	}
	if j < 0 || j >= len(firsts) {
		return nil
	}
	delta := firsts[j] - first
	tol := max(delta, -delta) / 2
	out := make([]int32, len(fam))
	for k, e := range fam {
		ed := c.g.Edges[e]
		if c.g.Block(ed.From) == nil || c.g.Block(ed.To) == nil {
			return nil
		}
		ps := c.twins[c.edgeShape(ed)]
		at, _ := c.g.Insns(ed.From)
		want := at + delta
		n, _ := slices.BinarySearchFunc(ps, want, func(p placed, w int) int { return p.at - w })
		best, bestD := int32(-1), tol+1
		for _, m := range []int{n - 1, n} {
			if m >= 0 && m < len(ps) {
				if d := max(ps[m].at-want, want-ps[m].at); d < bestD {
					best, bestD = ps[m].edge, d
				}
			}
		}
		if best < 0 {
			return nil
		}
		out[k] = best
	}
	for k := 1; k < len(out); k++ {
		if c.g.Edges[out[k]].From < c.g.Edges[out[k-1]].To {
			return nil // not in the order of a path
		}
	}
	return out
}
