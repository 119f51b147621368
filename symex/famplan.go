package symex

import (
	"errors"

	"github.com/cilium/ebpf/asm"

	"github.com/dpperf/dpperf/cfg"
)

// The over-approximation of a family (see Family): its steps, and what
// its regions may write.

// writes is what the nodes of a region may write.
type writes struct {
	regs  [11]bool
	slots map[int64]int // stack offset → largest store size there
}

// errOpaque says a region's effect is not over-approximated.
var errOpaque = errors.New("region with an effect that is not modelled")

// regionWrites collects the writes of the nodes of a region.
func regionWrites(g *cfg.Graph, nodes []cfg.NodeID) (*writes, error) {
	w := &writes{slots: map[int64]int{}}
	for _, n := range nodes {
		b := g.Block(n)
		if b == nil {
			return nil, errOpaque
		}
		for i := b.First; i <= b.Last; i++ {
			ins := g.Prog.Insns[i]
			op := ins.OpCode
			switch cls := op.Class(); {
			case cls.IsALU(), cls == asm.LdXClass, cls == asm.LdClass && op.Mode() == asm.ImmMode:
				w.regs[ins.Dst] = true
			case cls == asm.StClass || cls == asm.StXClass:
				if op.Mode() == asm.AtomicMode || ins.Dst != asm.R10 {
					return nil, errOpaque
				}
				off, size := int64(ins.Offset), int(op.Size().Sizeof())
				w.slots[off] = max(w.slots[off], size)
			case cls.IsJump():
				switch op.JumpOp() {
				case asm.Call, asm.Exit:
					return nil, errOpaque
				}
			default:
				return nil, errOpaque
			}
		}
	}
	return w, nil
}

// havocRegion gives everything w may write a fresh unconstrained value.
func (m *machine) havocRegion(w *writes) {
	for r, ok := range w.regs {
		if ok {
			m.st.regs[r] = scalar(m.b.fresh(64, "h"))
		}
	}
	if len(w.slots) == 0 {
		return
	}
	cells := m.st.writable(m.st.frame)
	for off, size := range w.slots {
		for i := range int64(size) {
			delete(cells, off+i) // read back as unconstrained bytes
		}
	}
}

// famStep is one step of a family's execution: an edge taken exactly, or
// a region (havoc set) followed by the body of the node it meets at.
type famStep struct {
	edge  int32
	havoc *writes
	into  cfg.NodeID
}

// familyPlan lays out the steps of the over-approximation of the paths that
// take edges in order, up to the last of them.
func familyPlan(g *cfg.Graph, out [][]int32, edges []int32, keep int) ([]famStep, error) {
	var steps []famStep
	from := g.Source
	for i, e := range edges {
		seg, nodes, err := segment(g, out, from, g.Edges[e].From)
		if err != nil {
			return nil, err
		}
		if i == 0 && keep > 0 && len(seg) > keep+2 {
			if seg, err = coarse(g, seg, nodes, keep); err != nil {
				return nil, err
			}
		}
		steps = append(steps, seg...)
		steps = append(steps, famStep{edge: e})
		from = g.Edges[e].To
	}
	return steps, nil
}

// coarse keeps the first step (the program's entry) and the last keep
// steps of a segment from the source, and makes one region of everything
// between: far from a family's first edge, what the program did matters
// less than what it may have written, and the check is smaller.
func coarse(g *cfg.Graph, seg []famStep, nodes []cfg.NodeID, keep int) ([]famStep, error) {
	entry := g.Edges[seg[0].edge].To
	last := seg[len(seg)-keep-1]
	into := last.into
	if last.havoc == nil {
		into = g.Edges[last.edge].To
	}
	var inside []cfg.NodeID
	for _, n := range nodes {
		if n > entry && n < into {
			inside = append(inside, n)
		}
	}
	w, err := regionWrites(g, inside)
	if err != nil {
		return nil, err
	}
	out := []famStep{seg[0], {edge: -1, havoc: w, into: into}}
	return append(out, seg[len(seg)-keep:]...), nil
}

// segment lays out the steps from node a (whose body has run) to node b
// (whose body runs last) over every path between them, and returns the
// nodes on such paths.
func segment(g *cfg.Graph, out [][]int32, a, b cfg.NodeID) ([]famStep, []cfg.NodeID, error) {
	if a == b {
		return nil, nil, nil
	}
	if a > b {
		return nil, nil, errOpaque // no path takes the edges in this order
	}
	// The nodes between a and b on some path from a to b: reachable from
	// a (forward, in topological order), and reaching b (backward).
	n := int(b-a) + 1
	fwd, bwd := make([]bool, n), make([]bool, n)
	fwd[0] = true
	for v := a; v <= b; v++ {
		if !fwd[v-a] {
			continue
		}
		for _, e := range out[v] {
			if to := g.Edges[e].To; to <= b {
				fwd[to-a] = true
			}
		}
	}
	if !fwd[n-1] {
		return nil, nil, errOpaque
	}
	bwd[n-1] = true
	for v := b - 1; v >= a; v-- {
		if !fwd[v-a] {
			continue
		}
		for _, e := range out[v] {
			if to := g.Edges[e].To; to <= b && bwd[to-a] {
				bwd[v-a] = true
			}
		}
	}
	// In a topological numbering, a node of the segment lies on every path
	// from a to b when no edge of the segment jumps over it.
	over := make([]int, n+1)
	for v := a; v <= b; v++ {
		if !bwd[v-a] {
			continue
		}
		for _, e := range out[v] {
			if to := g.Edges[e].To; to <= b && bwd[to-a] && to > v+1 {
				over[v-a+1]++
				over[to-a]--
			}
		}
	}
	var steps []famStep
	prev, inside := a, []cfg.NodeID(nil)
	depth := 0
	for i := 1; i < n; i++ {
		depth += over[i]
		v := a + cfg.NodeID(i)
		if !bwd[i] {
			continue
		}
		if depth > 0 {
			inside = append(inside, v)
			continue
		}
		// v is on every path: one edge from prev, or a region between.
		var direct []int32
		for _, e := range out[prev] {
			if to := g.Edges[e].To; to <= b && bwd[to-a] {
				direct = append(direct, e)
			}
		}
		if len(inside) == 0 && len(direct) == 1 {
			steps = append(steps, famStep{edge: direct[0]})
		} else {
			for _, e := range out[prev] {
				if k := g.Edges[e].Kind; k == cfg.EdgeCall || k == cfg.EdgeReturn || k == cfg.EdgeExit {
					return nil, nil, errOpaque
				}
			}
			w, err := regionWrites(g, inside)
			if err != nil {
				return nil, nil, err
			}
			steps = append(steps, famStep{edge: -1, havoc: w, into: v})
		}
		prev, inside = v, inside[:0]
	}
	var nodes []cfg.NodeID
	for i, ok := range bwd {
		if ok {
			nodes = append(nodes, a+cfg.NodeID(i))
		}
	}
	return steps, nodes, nil
}
