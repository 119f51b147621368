package cfg

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/cilium/ebpf/asm"

	"github.com/dpperf/dpperf/bpfprog"
	"github.com/dpperf/dpperf/internal/fail"
)

// Options control loop unrolling.
type Options struct {
	// Unroll bounds loops whose trip count the analysis cannot prove; 0
	// makes such a loop an error.
	Unroll int
	// LoopBounds bounds particular loops, overriding any proof. Keys name a
	// loop by the source location of its header ("prog.c:42") or by its
	// first instruction ("insn:17").
	LoopBounds map[string]int
	// MaxTrips is how many iterations the analysis tries before it gives up
	// proving a bound (default 1024).
	MaxTrips int
	// MaxNodes limits the size of the expanded graph (default 4,000,000).
	MaxNodes int
}

// ErrTooLarge reports a program whose expansion exceeds Options.MaxNodes.
var ErrTooLarge = errors.New("expanded graph too large")

// Build expands p into its loop-free graph.
func Build(p *bpfprog.Program, opts Options) (*Graph, error) {
	return BuildContext(context.Background(), p, opts)
}

// BuildContext is Build that stops, with ctx's error, when ctx is done:
// a program may unroll into millions of blocks.
func BuildContext(ctx context.Context, p *bpfprog.Program, opts Options) (*Graph, error) {
	if opts.MaxTrips <= 0 {
		opts.MaxTrips = 1024
	}
	if opts.MaxNodes <= 0 {
		opts.MaxNodes = 4_000_000
	}
	g := &Graph{Prog: p}
	x := &expander{ctx: ctx, g: g, p: p, opts: opts, mapID: map[string]int16{}, loops: map[string]int{}}
	for fi := range p.Funcs {
		f, err := splitBlocks(p, fi)
		if err != nil {
			return nil, fail.Input(p.File, err)
		}
		if err := findLoops(p, f); err != nil {
			return nil, fail.Input(p.File, err)
		}
		g.Funcs = append(g.Funcs, f)
	}
	g.Source = x.node(-1, -1, -1)
	init := &state{stack: map[slotKey]slot{}}
	init.regs[asm.R1] = ptr(RegionCtx, 0, 0)
	init.regs[asm.R10] = ptr(RegionStack, 0, 0)
	exits, err := x.expandFunc(0, incoming{{from: g.Source, kind: EdgeEntry, st: init}}, 0)
	if err != nil {
		if errors.Is(err, ErrTooLarge) || ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return nil, err
		}
		return nil, fail.Input(p.File, err)
	}
	if len(exits) == 0 {
		return nil, fail.Inputf(p.File, "program %s never reaches its exit", p.Name)
	}
	g.Sink = x.node(-1, -1, -1)
	for _, e := range exits {
		g.Edges = append(g.Edges, Edge{From: e.from, To: g.Sink, Kind: EdgeExit})
	}
	return g, nil
}

// pending is an edge whose target node has not been created yet.
type pending struct {
	from   NodeID
	kind   EdgeKind
	st     *state
	minLen int32 // packet length the edge's condition implies
}

type incoming []pending

type expander struct {
	ctx    context.Context // ends the expansion early
	steps  int             // blocks expanded, for looking at ctx now and then
	g      *Graph
	p      *bpfprog.Program
	opts   Options
	frames int32
	mapID  map[string]int16
	loops  map[string]int   // loop key → index in g.Loops
	live   map[int][]uint16 // per function, registers live at each block's entry (split.go)
}

// funcCtx is one inlined instance of a function.
type funcCtx struct {
	f     *Func
	frame int32
	rets  incoming // exits of this instance (TermExit blocks)
}

func (x *expander) node(fn, block, frame int32) NodeID {
	x.g.Nodes = append(x.g.Nodes, Node{Func: fn, Block: block, Frame: frame})
	return NodeID(len(x.g.Nodes) - 1)
}

// expandFunc inlines one instance of function fi entered along in, and
// returns its exits (with states as they leave the callee).
func (x *expander) expandFunc(fi int, in incoming, depth int) (incoming, error) {
	if depth > 16 {
		return nil, fmt.Errorf("call depth exceeds 16 at function %s (recursion?)", x.p.Funcs[fi].Name)
	}
	fc := &funcCtx{f: x.g.Funcs[fi], frame: x.frames}
	x.frames++
	entry := make(incoming, len(in))
	for i, pe := range in {
		st := pe.st.clone()
		st.regs[asm.R10] = ptr(RegionStack, fc.frame, 0)
		entry[i] = pending{pe.from, pe.kind, st, pe.minLen}
	}
	exits, back, err := x.expandRegion(fc, nil, 0, entry, depth)
	if err != nil {
		return nil, err
	}
	if len(exits) != 0 || len(back) != 0 {
		return nil, fmt.Errorf("function %s: control leaves the function without exit", fc.f.Name)
	}
	return fc.rets, nil
}

// expandRegion expands the blocks of region r (nil: the whole function) once,
// entering at block entry along in. It returns the edges leaving r, by
// target block, and the back edges into r's header.
func (x *expander) expandRegion(fc *funcCtx, r *Loop, entry int, in incoming, depth int) (map[int]incoming, incoming, error) {
	f := fc.f
	pend := map[int]incoming{entry: in}
	exits := map[int]incoming{}
	var back incoming
	route := func(s int, pe pending) {
		switch {
		case r != nil && s == r.Header:
			back = append(back, pe)
		case !inRegion(r, s):
			exits[s] = append(exits[s], pe)
		default:
			pend[s] = append(pend[s], pe)
		}
	}
	for _, m := range x.members(f, r, entry) {
		inc := pend[m]
		if len(inc) == 0 {
			continue
		}
		delete(pend, m)
		if l := f.childOf(r, m); l != nil {
			lex, err := x.unroll(fc, l, inc, depth)
			if err != nil {
				return nil, nil, err
			}
			for _, t := range slices.Sorted(maps.Keys(lex)) {
				for _, pe := range lex[t] {
					route(t, pe)
				}
			}
			continue
		}
		if x.steps++; x.steps%1024 == 0 && x.ctx.Err() != nil {
			return nil, nil, fmt.Errorf("graph construction stopped after %d blocks: %w", len(x.g.Nodes), x.ctx.Err())
		}
		if len(x.g.Nodes) >= x.opts.MaxNodes {
			return nil, nil, fmt.Errorf("%w: more than %d blocks after inlining and unrolling; bound loops lower", ErrTooLarge, x.opts.MaxNodes)
		}
		for _, group := range x.partition(f, m, inc) {
			if err := x.block(fc, m, group, route, depth); err != nil {
				return nil, nil, err
			}
		}
	}
	return exits, back, nil
}

// block makes one node of block m of fc, entered along in, executes it and
// routes the edges leaving it.
func (x *expander) block(fc *funcCtx, m int, in incoming, route func(int, pending), depth int) error {
	f := fc.f
	id := x.node(int32(f.Index), int32(m), fc.frame)
	var st *state
	for _, pe := range in {
		x.g.Edges = append(x.g.Edges, Edge{From: pe.from, To: id, Kind: pe.kind, MinLen: pe.minLen})
		st = joinStates(st, pe.st)
	}
	b := &f.Blocks[m]
	x.exec(id, b, st)
	switch b.Term {
	case TermExit:
		fc.rets = append(fc.rets, pending{id, EdgeReturn, st, 0})
	case TermFall:
		route(b.Next, pending{id, EdgeFall, st, 0})
	case TermJump:
		route(b.Target, pending{id, EdgeJump, st, 0})
	case TermCond:
		ins := x.p.Insns[b.Last]
		other := constant(ins.Constant)
		if ins.OpCode.Source() == asm.RegSource {
			other = st.regs[ins.Src]
		}
		op, is32 := ins.OpCode.JumpOp(), ins.OpCode.Class() == asm.Jump32Class
		taken, known := decide(op, is32, st.regs[ins.Dst], other)
		var onTaken, onNot int32
		if !st.adjusted && !is32 {
			onTaken, onNot = packetLen(op, st.regs[ins.Dst], other)
		}
		if !known || taken {
			route(b.Target, pending{id, EdgeTaken, st, onTaken})
		}
		if !known || !taken {
			route(b.Next, pending{id, EdgeNotTaken, st, onNot})
		}
	case TermCall:
		rets, err := x.expandFunc(b.Callee, incoming{{id, EdgeCall, st, 0}}, depth+1)
		if err != nil {
			return err
		}
		callee := x.g.Nodes[len(x.g.Nodes)-1].Frame
		for _, re := range rets {
			rs := re.st.clone()
			for reg := asm.R1; reg <= asm.R5; reg++ {
				rs.regs[reg] = top
			}
			for reg := asm.R6; reg <= asm.R10; reg++ {
				rs.regs[reg] = st.regs[reg]
			}
			rs.clearFrame(callee)
			route(b.Next, pending{re.from, EdgeReturn, rs, 0})
		}
	}
	return nil
}

// unroll expands loop l, entered along in, once per iteration until no back
// edge can be taken (a proven bound) or the bound from the options is
// reached. It returns the edges leaving the loop.
func (x *expander) unroll(fc *funcCtx, l *Loop, in incoming, depth int) (map[int]incoming, error) {
	key, line := x.loopKey(l)
	limit, how := x.opts.MaxTrips, "proven"
	if n, ok := x.boundFor(key, line); ok {
		limit, how = n, "bound"
	}
	nodes, edges, rets := len(x.g.Nodes), len(x.g.Edges), len(fc.rets)
	for {
		out := map[int]incoming{}
		cur, trips := in, 0
		for len(cur) > 0 {
			if trips == limit {
				if how != "proven" {
					break // the user's bound: remaining back edges are cut
				}
				if x.opts.Unroll <= 0 {
					return nil, fmt.Errorf("%s: cannot prove a bound for the loop in %s within %d iterations; give one with --unroll N or --loop-bound %s=N",
						where(x.p, l.Insn), fc.f.Name, limit, key)
				}
				break
			}
			lex, lback, err := x.expandRegion(fc, l, l.Header, cur, depth)
			if err != nil {
				return nil, err
			}
			for t, pes := range lex {
				out[t] = append(out[t], pes...)
			}
			cur = lback
			trips++
		}
		if len(cur) > 0 && how == "proven" {
			// No proof: discard the attempt and unroll to the user's bound.
			x.g.Nodes, x.g.Edges, fc.rets = x.g.Nodes[:nodes], x.g.Edges[:edges], fc.rets[:rets]
			limit, how = x.opts.Unroll, "unroll"
			continue
		}
		x.noteLoop(key, LoopBound{Func: fc.f.Name, Insn: l.Insn, Line: line, Trips: trips, How: how})
		return out, nil
	}
}

// loopKey names a loop for --loop-bound: its header's source line when
// known, else its first instruction.
func (x *expander) loopKey(l *Loop) (key, line string) {
	line, _ = x.p.Line(l.Insn)
	key = "insn:" + strconv.Itoa(l.Insn)
	if line != "" {
		key = line
	}
	return key, line
}

func (x *expander) boundFor(key, line string) (int, bool) {
	if n, ok := x.opts.LoopBounds[key]; ok {
		return n, true
	}
	if line != "" {
		for k, n := range x.opts.LoopBounds {
			if strings.HasSuffix(line, k) || strings.HasSuffix(k, line) {
				return n, true
			}
		}
	}
	return 0, false
}

func (x *expander) noteLoop(key string, lb LoopBound) {
	if i, ok := x.loops[key]; ok {
		x.g.Loops[i].Trips = max(x.g.Loops[i].Trips, lb.Trips)
		return
	}
	x.loops[key] = len(x.g.Loops)
	x.g.Loops = append(x.g.Loops, lb)
}
