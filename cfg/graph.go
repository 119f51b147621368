package cfg

import (
	"github.com/cilium/ebpf/asm"

	"github.com/dpperf/dpperf/bpfprog"
)

// NodeID names a node of a Graph.
type NodeID int32

// EdgeKind says how control moves along an edge.
type EdgeKind uint8

const (
	EdgeEntry    EdgeKind = iota // source → program entry
	EdgeFall                     // fall-through into the next block
	EdgeJump                     // unconditional jump
	EdgeTaken                    // conditional jump taken
	EdgeNotTaken                 // conditional jump not taken
	EdgeCall                     // bpf-to-bpf call into a callee copy
	EdgeReturn                   // callee exit back to the caller
	EdgeExit                     // program exit → sink
)

var edgeKindNames = [...]string{"entry", "fall", "jump", "taken", "not-taken", "call", "return", "exit"}

func (k EdgeKind) String() string { return edgeKindNames[k] }

// OpKind classifies the instructions of a node that costs depend on beyond
// their opcode.
type OpKind uint8

const (
	OpLoad   OpKind = iota // memory load (LDX, LD_ABS/IND)
	OpStore                // memory store (ST, STX)
	OpAtomic               // atomic read-modify-write
	OpHelper               // helper call
)

// Op is a memory access or helper call inside a node, with what the
// analysis knows about it.
type Op struct {
	Insn   int32  // instruction index in Program.Insns
	Kind   OpKind //
	Region Region // memory region accessed; for helpers, RegionNone
	Map    int16  // map index in Graph.Maps (map value access, map helper), or -1
	Helper asm.BuiltinFunc
}

// Node is one copy of a basic block in the DAG. The source and the sink are
// virtual nodes with Func == -1.
type Node struct {
	Func  int32 // index in Graph.Funcs, -1 for source and sink
	Block int32 // block index in that function
	Frame int32 // stack frame (call-site instance) id
	Ops   []Op
}

// Edge is a DAG edge. A conditional jump's instruction is the last
// instruction of the From node's block.
type Edge struct {
	From, To NodeID
	Kind     EdgeKind
	// MinLen is the packet length, in bytes, that taking the edge proves:
	// the edge leaves a bounds check of a packet pointer at a constant
	// offset against data_end. It is 0 when the edge proves nothing, and it
	// under-estimates: checks at variable offsets, and checks after the
	// program moved the packet's head or tail, count as nothing.
	MinLen int32
}

// LoopBound reports how a loop was unrolled.
type LoopBound struct {
	Func  string
	Insn  int    // first instruction of the loop header
	Line  string // source location of the header, if known
	Trips int    // most header executions in any unrolled instance
	How   string // "proven", "unroll" (Options.Unroll) or "bound" (Options.LoopBounds)
}

// Graph is the loop-free expansion of a program. Nodes and Edges are in
// topological order; Nodes[Source] is first and Nodes[Sink] last.
type Graph struct {
	Prog         *bpfprog.Program
	Funcs        []*Func
	Maps         []*bpfprog.Map // indexed by Op.Map
	Nodes        []Node
	Edges        []Edge
	Source, Sink NodeID
	Loops        []LoopBound
}

// Block returns the basic block a node copies; nil for source and sink.
func (g *Graph) Block(n NodeID) *Block {
	nd := &g.Nodes[n]
	if nd.Func < 0 {
		return nil
	}
	return &g.Funcs[nd.Func].Blocks[nd.Block]
}

// Insns returns the instruction index range [first, last] of a node, or
// (0, -1) for the source and the sink.
func (g *Graph) Insns(n NodeID) (first, last int) {
	b := g.Block(n)
	if b == nil {
		return 0, -1
	}
	return b.First, b.Last
}

// OutEdges returns, for each node, the indices of its outgoing edges.
func (g *Graph) OutEdges() [][]int32 {
	out := make([][]int32, len(g.Nodes))
	for i, e := range g.Edges {
		out[e.From] = append(out[e.From], int32(i))
	}
	return out
}

// InEdges returns, for each node, the indices of its incoming edges.
func (g *Graph) InEdges() [][]int32 {
	in := make([][]int32, len(g.Nodes))
	for i, e := range g.Edges {
		in[e.To] = append(in[e.To], int32(i))
	}
	return in
}
