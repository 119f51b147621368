package bound

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/cilium/ebpf/asm"

	"github.com/dpperf/dpperf/bpfprog"
	"github.com/dpperf/dpperf/cfg"
	"github.com/dpperf/dpperf/interp"
	"github.com/dpperf/dpperf/target"
)

// Costed is a program graph priced under a target.
type Costed struct {
	G     *cfg.Graph
	T     *target.Target
	Edge  []target.Vec // cost of each edge of G
	Notes []string     // what the target cannot run or only estimates
	// PCV holds the values of performance-critical variables (interp/pcv.yaml)
	// assumed for every map operation (CostWith); nil: all at 0.
	PCV map[string]float64
	// PCVOps counts the map operations of G whose PCVs the target prices.
	PCVOps int
	// JIT translates instructions into the target's when the target names
	// a JIT (nil: instructions are priced by class).
	JIT Translator
	// insn holds, per node, the cost of each of its instructions (their
	// sum is the node's body cost), for the per-line breakdown of a path.
	insn [][]target.Vec
}

// Cost prices every edge of g under t. An edge costs the instructions of
// its source node plus, for a conditional jump, the taken or not-taken
// branch; the entry edge carries the per-packet overhead. Blocking memory
// accesses cost max(min, latency − cycles since the previous memory
// access), where the cycles since are the fewest over all paths reaching
// the node: an over-estimate valid for every path, as the bound requires.
func Cost(g *cfg.Graph, t *target.Target) *Costed { return CostWith(g, t, nil) }

// CostWith is Cost with the performance-critical variables of every map
// operation at the values of pcv (by PCV name: traversals, evicted, stages,
// bucket_len), each unit priced by the target's pcv section on top of the
// helper's cost, which holds with every PCV at 0. A bound under these
// costs holds for packets whose map operations stay within the values.
func CostWith(g *cfg.Graph, t *target.Target, pcv map[string]float64) *Costed {
	c := &Costed{G: g, T: t, Edge: make([]target.Vec, len(g.Edges)), PCV: pcv, JIT: newTranslator(g, t),
		insn: make([][]target.Vec, len(g.Nodes))}
	notes := map[string]bool{}
	in, out := g.InEdges(), g.OutEdges()
	sinceOut := make([]float64, len(g.Edges))
	bc := t.BlockComponent
	for n := range g.Nodes {
		since := 0.0
		if len(in[n]) > 0 {
			since = math.Inf(1)
			for _, e := range in[n] {
				since = min(since, sinceOut[e])
			}
		}
		body, end := c.nodeCost(cfg.NodeID(n), since, notes)
		for _, ei := range out[n] {
			v := body
			switch g.Edges[ei].Kind {
			case cfg.EdgeEntry:
				v = v.Add(c.perPacket())
			case cfg.EdgeTaken:
				v = v.Add(t.Taken)
			case cfg.EdgeNotTaken:
				v = v.Add(t.NotTaken)
			}
			c.Edge[ei] = v
			if bc >= 0 && g.Edges[ei].Kind != cfg.EdgeEntry {
				// The firmware may access memory just before the program
				// starts, so its overhead hides no latency.
				sinceOut[ei] = end + (v[bc] - body[bc])
			}
		}
	}
	c.PCVOps = c.pcvOps()
	for n := range notes {
		c.Notes = append(c.Notes, n)
	}
	sort.Strings(c.Notes)
	return c
}

// nodeCost prices the instructions of node n entered with since units of
// the blocking component spent since the last memory access. It returns the
// cost and the units since the last memory access at the end of the node.
func (c *Costed) nodeCost(n cfg.NodeID, since float64, notes map[string]bool) (target.Vec, float64) {
	g, t := c.G, c.T
	first, last := g.Insns(n)
	nd := &g.Nodes[n]
	ops := nd.Ops
	bc := t.BlockComponent
	var v target.Vec
	per := make([]target.Vec, last-first+1)
	c.insn[n] = per
	for i := first; i <= last; i++ {
		var cost target.Vec
		memory := false
		if c.JIT != nil {
			ic := c.JIT.Insn(i)
			cost, memory = ic.Cost, ic.Memory
			if ic.Latency > 0 && bc >= 0 {
				cost[bc] += max(t.BlockMin, ic.Latency-since)
			}
			if ic.Note != "" {
				notes[ic.Note] = true
			}
		} else if len(ops) > 0 && int(ops[0].Insn) == i {
			op := ops[0]
			ops = ops[1:]
			cost, memory = c.opCost(op, notes)
			if op.Kind != cfg.OpHelper {
				region, kind := regionName(op.Region), accessName(op.Kind)
				if a := t.Memory[region][kind]; a.Latency > 0 {
					cost[bc] += max(t.BlockMin, a.Latency-since)
				}
			}
		} else {
			cls := target.Class(g.Prog.Insns[i], nd.Func > 0)
			if cls == "" {
				continue
			}
			if why, ok := t.Unsupported[cls]; ok {
				notes[fmt.Sprintf("%s: %s", cls, why)] = true
			}
			cost = t.Classes[cls]
		}
		v = v.Add(cost)
		per[i-first] = cost
		if bc >= 0 {
			if memory {
				since = 0
			} else {
				since += cost[bc]
			}
		}
	}
	if len(t.Chain) > 0 && c.JIT == nil {
		v = v.Add(chainCosts(t, g.Prog.Insns, first, last, nd.Func > 0, per))
	}
	return v, since
}

// perPacket is the target's per-packet cost plus what its JIT adds.
func (c *Costed) perPacket() target.Vec {
	if c.JIT == nil {
		return c.T.PerPacket
	}
	return c.T.PerPacket.Add(c.JIT.PerPacket())
}

// TargetInsns counts the target instructions the JIT emits for the
// instructions of the given edges' destination nodes (0 without a JIT).
func (c *Costed) TargetInsns(edges []int32) int {
	if c.JIT == nil {
		return 0
	}
	n := 0
	for _, e := range edges {
		first, last := c.G.Insns(c.G.Edges[e].To)
		for i := first; i <= last; i++ {
			n += c.JIT.Insn(i).Insns
		}
	}
	return n
}

// opCost prices a memory access or helper call; memory says whether it
// uses the memory system (resetting the blocking-latency clock).
func (c *Costed) opCost(op cfg.Op, notes map[string]bool) (target.Vec, bool) {
	t := c.T
	if op.Kind == cfg.OpHelper {
		name := target.HelperName(op.Helper)
		mt, keyBytes := "", 0
		if op.Map >= 0 && c.G.Maps[op.Map] != nil {
			m := c.G.Maps[op.Map]
			mt, keyBytes = target.MapTypeName(m.Type), int(m.KeySize)
		}
		v, ok, longer := t.HelperKeyCost(name, mt, keyBytes)
		if longer {
			notes[fmt.Sprintf("helper %s on %s: %d-byte keys are longer than any measured; the cost is extrapolated", name, mt, keyBytes)] = true
		}
		if !ok {
			why := t.Unsupported["helpers"]
			if why == "" {
				why = "no cost entry; priced at the target's default helper cost"
			}
			notes[fmt.Sprintf("helper %s: %s", name, why)] = true
		}
		if op.Helper == asm.FnTailCall {
			notes["tail calls: the called program's cost is not included"] = true
		}
		if op.Map >= 0 && c.G.Maps[op.Map] != nil {
			v = v.Add(c.pcvCost(c.G.Maps[op.Map], op.Helper, notes))
		}
		return v, true
	}
	region, kind := regionName(op.Region), accessName(op.Kind)
	if why, ok := t.Unsupported[region+"."+kind]; ok {
		notes[fmt.Sprintf("%s.%s: %s", region, kind, why)] = true
	}
	if region == "unknown" {
		notes["some memory accesses have no known region; priced as the worst region"] = true
	}
	memory := region == "packet" || region == "map_value" || region == "unknown"
	return t.Memory[region][kind].Cost, memory
}

func regionName(r cfg.Region) string {
	switch r {
	case cfg.RegionPacket, cfg.RegionPacketEnd:
		return "packet"
	case cfg.RegionStack:
		return "stack"
	case cfg.RegionCtx:
		return "ctx"
	case cfg.RegionMapValue:
		return "map_value"
	}
	return "unknown"
}

func accessName(k cfg.OpKind) string {
	switch k {
	case cfg.OpStore:
		return "store"
	case cfg.OpAtomic:
		return "atomic"
	}
	return "load"
}

// PathCost sums the cost vectors of a path's edges.
func (c *Costed) PathCost(edges []int32) target.Vec {
	var v target.Vec
	for _, e := range edges {
		v = v.Add(c.Edge[e])
	}
	return v
}

// PCVPrice is a PCV a map operation reports (interp/pcv.yaml), with the
// target's cost per unit when it has one.
type PCVPrice struct {
	Name   string
	Unit   target.Vec
	Priced bool // the target's pcv section has a cost for it
}

// PCVPrices returns the PCVs of helper call fn on map m, in the table's
// order, each with the target's cost per unit: none for helpers that are
// not map operations.
func PCVPrices(t *target.Target, m *bpfprog.Map, fn asm.BuiltinFunc) []PCVPrice {
	names, _ := interp.Model().OfHelper(m.Type, fn)
	units := t.PCV[target.MapTypeName(m.Type)]
	out := make([]PCVPrice, len(names))
	for i, name := range names {
		unit, ok := units[name]
		out[i] = PCVPrice{Name: name, Unit: unit, Priced: ok}
	}
	return out
}

// pcvCost prices the assumed PCVs of a helper call on map m.
func (c *Costed) pcvCost(m *bpfprog.Map, fn asm.BuiltinFunc, notes map[string]bool) target.Vec {
	var v target.Vec
	for _, p := range PCVPrices(c.T, m, fn) {
		n := c.PCV[p.Name]
		switch {
		case n == 0:
		case !p.Priced:
			notes[fmt.Sprintf("pcv %s on %s: the target has no cost for it; priced at 0", p.Name, target.MapTypeName(m.Type))] = true
		default:
			v = v.Add(p.Unit.Times(n))
		}
	}
	return v
}

// pcvOps counts the map operations of the graph whose PCVs the target
// prices.
func (c *Costed) pcvOps() int {
	n := 0
	for _, nd := range c.G.Nodes {
		for _, op := range nd.Ops {
			if op.Kind != cfg.OpHelper || op.Map < 0 || c.G.Maps[op.Map] == nil {
				continue
			}
			if slices.ContainsFunc(PCVPrices(c.T, c.G.Maps[op.Map], op.Helper), func(p PCVPrice) bool { return p.Priced }) {
				n++
			}
		}
	}
	return n
}

// ExactCost prices one path with the memory latency it really hides: the
// cycles since the previous memory access are counted along this path, not
// taken as the fewest over all paths as Cost does. ExactCost(p) never
// exceeds PathCost(p).
func (c *Costed) ExactCost(edges []int32) target.Vec {
	g, t := c.G, c.T
	bc := t.BlockComponent
	notes := map[string]bool{}
	var total target.Vec
	since := 0.0
	for _, ei := range edges {
		e := g.Edges[ei]
		body, end := c.nodeCost(e.From, since, notes)
		v := body
		switch e.Kind {
		case cfg.EdgeEntry:
			v = v.Add(c.perPacket())
		case cfg.EdgeTaken:
			v = v.Add(t.Taken)
		case cfg.EdgeNotTaken:
			v = v.Add(t.NotTaken)
		}
		total = total.Add(v)
		if bc >= 0 {
			since = 0
			if e.Kind != cfg.EdgeEntry {
				since = end + (v[bc] - body[bc])
			}
		}
	}
	return total
}

// PacketRateOf is the packet rate of one path under the target, priced as
// the search prices its paths and capped by the target's fixed limits.
func (c *Costed) PacketRateOf(edges []int32) float64 {
	return c.bound(c.pathOf(edges, PacketRate)).PacketRate
}
