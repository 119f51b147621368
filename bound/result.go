package bound

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/dpperf/dpperf/cfg"
	"github.com/dpperf/dpperf/interp"
	"github.com/dpperf/dpperf/target"
)

// Schema names the JSON form of a Result (see json.md).
const Schema = "dpperf.bound/v1"

// Result is the outcome of a bound analysis.
type Result struct {
	Schema  string      `json:"schema"`
	Program ProgramInfo `json:"program"`
	Graph   GraphInfo   `json:"graph"`
	Target  TargetInfo  `json:"target"`
	// TargetInstructions counts the instructions the target's JIT
	// compiles the whole program to (absent: the target names no JIT).
	TargetInstructions int `json:"target_instructions,omitempty"`
	// Kind says what the bound establishes: "naive" (the slowest path,
	// whether or not any packet can take it), "ssp" (the slowest path that
	// some packet can take) or "intermediate" (a search cut short: every
	// path slower than the bound is impossible, faster ones are unchecked).
	Kind string `json:"kind"`
	// Basis is the target's (target.Basis): "calibrated", or "estimated",
	// when the bound is an estimate rather than a guarantee.
	Basis  string `json:"basis"`
	Metric string `json:"metric"` // "pps" or "bps": what the search ordered by
	// Packets says which packets a search considered: "any" (any bytes)
	// or "well-formed" (headers a host's stack accepts, --well-formed).
	// Empty for the naive bound, which considers every path.
	Packets string `json:"packets,omitempty"`
	Bound   Bound  `json:"bound"`
	// Expected is the bound's path at the calibration's medians rather
	// than its high percentile (calibrated targets): what the path
	// reaches on a typical run, where Bound is the guarantee.
	Expected *Bound       `json:"expected,omitempty"`
	Naive    *Bound       `json:"naive,omitempty"` // the naive bound, for comparison
	Search   *SearchInfo  `json:"search,omitempty"`
	Paths    []PathReport `json:"paths"`
	// PCV holds the values assumed for the performance-critical variables
	// of every map operation (`--pcv`); absent: all at 0.
	PCV   map[string]float64 `json:"pcv,omitempty"`
	Notes []string           `json:"notes"`
}

// SearchInfo describes a search for the slowest satisfiable path.
type SearchInfo struct {
	Workers  int `json:"workers"`
	Checked  int `json:"paths_checked"`     // paths decided, in order
	Refuted  int `json:"paths_refuted"`     // of which impossible
	Unknown  int `json:"paths_unknown"`     // solver timeouts, taken as possible
	Larger   int `json:"paths_larger"`      // possible only with packets too long to lower the bit rate
	Folded   int `json:"refuted_folded"`    // refuted by a constant condition, without the solver
	ByLemma  int `json:"refuted_by_lemma"`  // refuted by a lemma another path taught, without the solver
	Lemmas   int `json:"lemmas"`            // refuted windows learned (symex.Lemmas)
	ByFamily int `json:"refuted_by_family"` // refuted as members of a family proven impossible, without the solver
	Families int `json:"families"`          // families of paths proven impossible and left out of the enumeration
	Twins    int `json:"families_twins"`    // of which twins, one loop iteration apart, of another
	Solver   int `json:"solver_checks"`
	// Uninverted counts satisfiable paths whose example was left
	// approximate without solving for their hashes, which the solver
	// could not do in time on another path (symex.Checker.Uninverted).
	Uninverted int     `json:"examples_uninverted"`
	Prefixes   int     `json:"refuted_prefixes"` // prefixes pruned from the enumeration
	Enumerated int     `json:"paths_enumerated"`
	Seconds    float64 `json:"seconds"`
	Series     []Point `json:"series"` // the bound as it improved
}

// Point is the bound at a moment of the search.
type Point struct {
	Seconds float64 `json:"seconds"`
	Bound   float64 `json:"bound"` // in the metric's unit
	Checked int     `json:"checked"`
}

// ProgramInfo identifies the analysed program.
type ProgramInfo struct {
	File         string `json:"file"`
	Name         string `json:"name"`
	Section      string `json:"section"`
	Type         string `json:"type"`
	Instructions int    `json:"instructions"`
	Functions    int    `json:"functions"`
}

// GraphInfo describes the loop-free graph the analysis ran on.
type GraphInfo struct {
	Nodes int             `json:"nodes"`
	Edges int             `json:"edges"`
	Loops []cfg.LoopBound `json:"loops"`
}

// TargetInfo names the target and its fixed limits.
type TargetInfo struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Components  []ComponentInfo `json:"components"`
	PacketRate  float64         `json:"packet_rate_limit,omitempty"`
	LineRate    float64         `json:"line_rate,omitempty"`
	MinPacket   int             `json:"min_packet"`
}

// ComponentInfo is a component of the target.
type ComponentInfo struct {
	Name     string  `json:"name"`
	Unit     string  `json:"unit"`
	Capacity float64 `json:"capacity"`
}

// Bound is the throughput guarantee.
type Bound struct {
	PacketRate  float64 `json:"packet_rate"`  // packets/s
	BitRate     float64 `json:"bit_rate"`     // bit/s at PacketBytes
	PacketBytes int     `json:"packet_bytes"` // packet size the bit rate assumes
	Bottleneck  string  `json:"bottleneck"`   // component, "packet_rate_limit" or "line_rate"
	PathRate    float64 `json:"path_rate"`    // packets/s of the slowest path alone
}

// PathReport is one path of the result, slowest first.
type PathReport struct {
	Rank         int                `json:"rank"`
	PacketRate   float64            `json:"packet_rate"`
	ExpectedRate float64            `json:"expected_packet_rate,omitempty"` // at the calibration's medians
	BitRate      float64            `json:"bit_rate"`
	Bottleneck   string             `json:"bottleneck"`
	Cost         map[string]float64 `json:"cost"`
	Instructions int                `json:"instructions"`
	// TargetInstructions: the target instructions the path's BPF
	// instructions compile to (targets with a JIT only).
	TargetInstructions int          `json:"target_instructions,omitempty"`
	Lines              []SourceLine `json:"lines"`
	// Status of a searched path: "satisfiable", or "unknown" (a solver
	// timeout; taken as possible, which keeps the bound valid).
	Status      string   `json:"status,omitempty"`
	PacketBytes int      `json:"packet_bytes,omitempty"` // smallest packet that takes the path
	Example     *Example `json:"example,omitempty"`
	// Lookups are the path's map lookups in order, each with the outcome
	// its example takes and the price it was given (searched paths).
	Lookups  []LookupPrice `json:"lookups,omitempty"`
	Measured *Measured     `json:"measured,omitempty"` // --measure
	Edges    []int32       `json:"-"`
}

// SourceLine is a source location on a path with what its instructions
// cost there, as perf annotate shows a profile: the BPF instructions the
// path runs on that line, their cost per target component (a helper's
// cost on its call's line; a conditional jump's branch cost on the jump's
// line) and the line's share of the path's cost on the bottleneck
// component. Consecutive instructions of one line form one entry; a line
// the path returns to (a loop) gets another.
type SourceLine struct {
	Loc          string             `json:"loc"`
	Text         string             `json:"text"`
	Instructions int                `json:"instructions"`
	Cost         map[string]float64 `json:"cost"`
	Share        float64            `json:"share"`
}

// Naive computes the naive bound of c: the slowest path over all components
// whether or not a packet can take it, with the k slowest paths (at least
// one) in Result.Paths. It stops early when ctx is cancelled, keeping the
// paths found so far.
func Naive(ctx context.Context, c *Costed, k int) (*Result, error) {
	r := newResult(c)
	r.Kind, r.Metric = "naive", PacketRate.String()
	o, err := NewOrdered(c)
	if err != nil {
		return nil, err
	}
	for i := 0; i < max(k, 1) && ctx.Err() == nil; i++ {
		p, ok := o.Next()
		if !ok {
			break
		}
		r.Paths = append(r.Paths, c.report(i+1, p))
		if i == 0 {
			r.Bound = c.bound(p)
		}
	}
	return r, nil
}

func newResult(c *Costed) *Result {
	g, t, p := c.G, c.T, c.G.Prog
	r := &Result{
		Schema: Schema,
		Program: ProgramInfo{File: p.File, Name: p.Name, Section: p.Section, Type: p.Type.String(),
			Instructions: len(p.Insns), Functions: len(p.Funcs)},
		Graph:  GraphInfo{Nodes: len(g.Nodes), Edges: len(g.Edges), Loops: g.Loops},
		Target: TargetInfo{Name: t.Name, Description: t.Description, PacketRate: t.PacketRate, LineRate: t.LineRate, MinPacket: t.MinPacket},
		Basis:  t.Basis,
		Notes:  append(append([]string{}, p.Notes...), c.Notes...),
		PCV:    c.PCV,
	}
	if c.JIT != nil {
		r.TargetInstructions = c.JIT.Program()
	}
	if note := c.pcvNote(); note != "" {
		r.Notes = append(r.Notes, note)
	}
	if r.Graph.Loops == nil {
		r.Graph.Loops = []cfg.LoopBound{}
	}
	for _, comp := range t.Components {
		r.Target.Components = append(r.Target.Components, ComponentInfo{comp.Name, comp.Unit, comp.Capacity})
	}
	return r
}

// Packets values of a Result.
const (
	PacketsAny        = "any"
	PacketsWellFormed = "well-formed"
)

func packetsOf(wellFormed bool) string {
	if wellFormed {
		return PacketsWellFormed
	}
	return PacketsAny
}

// bound turns the slowest path into the guarantee, capped by the target's
// fixed limits.
func (c *Costed) bound(p Path) Bound {
	return c.boundAt(p.Rate, c.T.MinPacket, c.T.Components[p.Bottleneck].Name)
}

// boundAt is the guarantee of a path sustaining rate packets/s at packets
// of size bytes, capped by the target's packet-rate and line-rate limits.
func (c *Costed) boundAt(rate float64, size int, bottleneck string) Bound {
	t := c.T
	b := Bound{PacketRate: rate, PathRate: rate, PacketBytes: size, Bottleneck: bottleneck}
	if t.PacketRate > 0 && t.PacketRate < b.PacketRate {
		b.PacketRate, b.Bottleneck = t.PacketRate, "packet_rate_limit"
	}
	if t.LineRate > 0 {
		if line := t.LineRate / float64(8*(size+t.WireOverhead)); line < b.PacketRate {
			b.PacketRate, b.Bottleneck = line, "line_rate"
		}
	}
	b.BitRate = b.PacketRate * float64(8*size)
	return b
}

// report describes path p for people and machines.
func (c *Costed) report(rank int, p Path) PathReport {
	t := c.T
	pr := PathReport{Rank: rank, PacketRate: p.Rate, BitRate: p.Rate * float64(8*t.MinPacket),
		Bottleneck: t.Components[p.Bottleneck].Name, Cost: map[string]float64{}}
	if math.IsInf(pr.PacketRate, 1) {
		pr.PacketRate, pr.BitRate = 0, 0
	}
	for k, comp := range t.Components {
		pr.Cost[comp.Name] = round(p.Cost[k])
	}
	pr.TargetInstructions = c.TargetInsns(p.Edges)
	pr.Edges = p.Edges
	var costs []target.Vec // of pr.Lines
	add := func(loc, text string, v target.Vec, insns int) {
		if k := len(pr.Lines) - 1; k >= 0 && pr.Lines[k].Loc == loc {
			costs[k] = costs[k].Add(v)
			pr.Lines[k].Instructions += insns
			return
		}
		pr.Lines = append(pr.Lines, SourceLine{Loc: loc, Text: text, Instructions: insns})
		costs = append(costs, v)
	}
	overhead := c.walk(p.Edges, func(insn int, loc, text string, v target.Vec) {
		n := 0
		if insn >= 0 {
			n, pr.Instructions = 1, pr.Instructions+1
		}
		add(loc, text, v, n)
	})
	if overhead != (target.Vec{}) {
		pr.Lines = append([]SourceLine{{Loc: "-", Text: "(per-packet overhead of the target)"}}, pr.Lines...)
		costs = append([]target.Vec{overhead}, costs...)
	}
	// Shares of the lines' sum, which may exceed the path's exact cost
	// where a blocking access is priced for the fewest cycles before it
	// over all paths (the edges' over-estimate).
	total := 0.0
	for _, v := range costs {
		total += v[p.Bottleneck]
	}
	for k := range pr.Lines {
		pr.Lines[k].Cost = map[string]float64{}
		for ci, comp := range t.Components {
			pr.Lines[k].Cost[comp.Name] = round(costs[k][ci])
		}
		if total > 0 {
			pr.Lines[k].Share = round(costs[k][p.Bottleneck] / total)
		}
	}
	return pr
}

// walk visits the cost of a path in order: each instruction (insn ≥ 0)
// with its source line, and the branch a jump takes as a cost of the
// jump's line (insn −1). An instruction without line information belongs
// to the line before it. It returns the per-packet overhead, which no
// line holds.
func (c *Costed) walk(edges []int32, visit func(insn int, loc, text string, v target.Vec)) (overhead target.Vec) {
	g := c.G
	lastLoc, lastText := "", ""
	for _, e := range edges {
		// An edge carries its source node's instructions, plus the
		// per-packet overhead (entry) or the branch its jump takes.
		n := g.Edges[e].From
		first, end := g.Insns(n)
		extra := c.Edge[e]
		for i := first; i <= end; i++ {
			cost := c.insn[n][i-first]
			for k := range extra {
				extra[k] -= cost[k]
			}
			loc, text := g.Prog.Line(i)
			if loc == "" {
				loc, text = lastLoc, lastText // a line's further instructions
			}
			if loc == "" {
				loc, text = "-", "(no line information)"
			}
			visit(i, loc, text, cost)
			lastLoc, lastText = loc, text
		}
		switch {
		case g.Edges[e].Kind == cfg.EdgeEntry:
			overhead = overhead.Add(extra)
		case extra != (target.Vec{}) && lastLoc != "":
			visit(-1, lastLoc, lastText, extra)
		}
	}
	return overhead
}

// round keeps costs readable and stable in JSON: 9 significant digits.
func round(x float64) float64 {
	if x == 0 || math.IsInf(x, 0) || math.IsNaN(x) {
		return x
	}
	d := math.Pow(10, 8-math.Floor(math.Log10(math.Abs(x))))
	return math.Round(x*d) / d
}

// pcvNote says what the bound assumes of its map operations' PCVs, when
// the target prices them.
func (c *Costed) pcvNote() string {
	if c.PCVOps == 0 {
		return ""
	}
	if len(c.PCV) == 0 {
		return fmt.Sprintf("%d map operations priced with their PCVs at 0 (hash chains of one element, "+
			"no LRU eviction, the shortest trie walk); --pcv NAME=N prices a worse case", c.PCVOps)
	}
	return fmt.Sprintf("%d map operations priced with %s (the target's cost per unit)", c.PCVOps, FormatPCV(c.PCV))
}

// FormatPCV writes PCV values as NAME=N,... sorted by name, as --pcv takes
// them.
func FormatPCV(pcv map[string]float64) string {
	names := make([]string, 0, len(pcv))
	for n := range pcv {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for i, n := range names {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%s=%g", n, pcv[n])
	}
	return b.String()
}

// ParsePCV reads NAME=N,... (the PCVs of interp/pcv.yaml that map
// operations report, each at most once, N ≥ 0).
func ParsePCV(s string) (map[string]float64, error) {
	known := map[string]bool{}
	for _, ops := range interp.Model().Maps {
		for _, names := range ops {
			for _, n := range names {
				known[n] = true
			}
		}
	}
	out := map[string]float64{}
	for _, item := range strings.Split(s, ",") {
		name, val, ok := strings.Cut(strings.TrimSpace(item), "=")
		if !ok {
			return nil, fmt.Errorf("--pcv %q: want NAME=N", item)
		}
		if !known[name] {
			all := make([]string, 0, len(known))
			for n := range known {
				all = append(all, n)
			}
			sort.Strings(all)
			return nil, fmt.Errorf("--pcv: %q is not a PCV of map operations (%s)", name, strings.Join(all, ", "))
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("--pcv: %s given twice", name)
		}
		n, err := strconv.ParseFloat(val, 64)
		if err != nil || n < 0 || math.IsInf(n, 0) || math.IsNaN(n) {
			return nil, fmt.Errorf("--pcv %s=%s: want a number ≥ 0", name, val)
		}
		out[name] = n
	}
	return out, nil
}

// SetExpected prices r's paths under c, the same graph under the
// calibration's medians: each path's expected rate, and the bound's path
// as Expected.
func (r *Result) SetExpected(c *Costed) {
	for i := range r.Paths {
		p := &r.Paths[i]
		if p.Edges == nil {
			continue
		}
		path := c.pathOf(p.Edges, PacketRate)
		if p.Status != "" {
			// A searched path: priced as the search priced it.
			cost, _ := c.OutcomeCost(p.Edges, p.KnownLookups())
			path = c.pathWith(cost, c.PathSize(p.Edges), PacketRate)
		}
		p.ExpectedRate = path.Rate
		if i == 0 {
			e := c.bound(path).PacketRate
			r.Expected = &Bound{PacketRate: e, PathRate: e, PacketBytes: r.Bound.PacketBytes, BitRate: e * float64(8*r.Bound.PacketBytes)}
		}
	}
}
