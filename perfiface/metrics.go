package perfiface

import (
	"fmt"
	"sort"
	"strings"

	"github.com/dpperf/dpperf/bound"
	"github.com/dpperf/dpperf/bpfprog"
	"github.com/dpperf/dpperf/cfg"
	"github.com/dpperf/dpperf/interp"
	"github.com/dpperf/dpperf/target"
)

// Metrics are what one path does.
type Metrics struct {
	Insns   int            `json:"insns"`   // BPF instructions executed
	Loads   map[string]int `json:"loads"`   // memory loads by region
	Stores  map[string]int `json:"stores"`  // memory stores by region (atomics count in both)
	Helpers map[string]int `json:"helpers"` // helper calls by "helper" or "helper(map)"
	Cost    Formula        `json:"cost"`    // under the target, in its unit
}

// Mem is the number of memory accesses.
func (m *Metrics) Mem() int {
	n := 0
	for _, v := range m.Loads {
		n += v
	}
	for _, v := range m.Stores {
		n += v
	}
	return n
}

// Formula is a cost: a constant plus a coefficient per PCV.
type Formula struct {
	Const float64 `json:"const"`
	Terms []Term  `json:"terms,omitempty"` // sorted by Var
}

// Term is coefficient × variable.
type Term struct {
	Coef float64 `json:"coef"`
	Var  string  `json:"var"`
}

// Constant is a formula without variables.
func Constant(c float64) Formula { return Formula{Const: c} }

func (f Formula) String() string {
	s := trimFloat(f.Const)
	for _, t := range f.Terms {
		s += " + " + trimFloat(t.Coef) + "*" + t.Var
	}
	return s
}

// Eval evaluates f with the given PCV values (missing ones are 0).
func (f Formula) Eval(vars map[string]float64) float64 {
	v := f.Const
	for _, t := range f.Terms {
		v += t.Coef * vars[t.Var]
	}
	return v
}

func trimFloat(v float64) string {
	s := fmt.Sprintf("%.1f", v)
	return strings.TrimSuffix(s, ".0")
}

// PCV is a performance-critical variable of an interface: one PCV of the
// operations of one map, summed over the operations on a path.
type PCV struct {
	Var  string `json:"var"`  // name in formulas, e.g. "traversals_flows"
	Map  string `json:"map"`  //
	Name string `json:"name"` // the PCV of interp/pcv.yaml
	Doc  string `json:"doc"`
}

// pcvVar names a PCV of a map.
func pcvVar(name, mapName string) string { return name + "_" + mapName }

// measurer computes path metrics.
type measurer struct {
	g     *cfg.Graph
	costs *bound.Costed
	comp  int
	pcvs  map[string]PCV
}

func newMeasurer(g *cfg.Graph, t *target.Target) *measurer {
	m := &measurer{g: g, pcvs: map[string]PCV{}}
	if t != nil {
		m.costs = bound.Cost(g, t)
	}
	return m
}

var regionNames = map[cfg.Region]string{cfg.RegionPacket: "packet", cfg.RegionStack: "stack",
	cfg.RegionCtx: "ctx", cfg.RegionMapValue: "map_value"}

func regionName(r cfg.Region) string {
	if s, ok := regionNames[r]; ok {
		return s
	}
	return "unknown"
}

func (m *measurer) metrics(edges []int32) Metrics {
	g := m.g
	mt := Metrics{Loads: map[string]int{}, Stores: map[string]int{}, Helpers: map[string]int{}}
	terms := map[string]float64{}
	for _, ei := range edges {
		n := g.Edges[ei].To
		first, last := g.Insns(n)
		mt.Insns += last - first + 1
		for _, op := range g.Nodes[n].Ops {
			switch op.Kind {
			case cfg.OpLoad:
				mt.Loads[regionName(op.Region)]++
			case cfg.OpStore:
				mt.Stores[regionName(op.Region)]++
			case cfg.OpAtomic:
				mt.Loads[regionName(op.Region)]++
				mt.Stores[regionName(op.Region)]++
			case cfg.OpHelper:
				name := target.HelperName(op.Helper)
				if op.Map >= 0 && int(op.Map) < len(g.Maps) && g.Maps[op.Map] != nil {
					mp := g.Maps[op.Map]
					name += "(" + mp.Name + ")"
					m.pcvTerms(terms, op, mp)
				}
				mt.Helpers[name]++
			}
		}
	}
	if m.costs != nil {
		mt.Cost.Const = m.costs.ExactCost(edges)[m.comp]
	} else {
		mt.Cost.Const = float64(mt.Insns)
	}
	mt.Cost.Terms = sortedTerms(terms)
	return mt
}

// sortedTerms turns coefficients by variable into terms sorted by
// variable.
func sortedTerms(coefs map[string]float64) []Term {
	var out []Term
	for v, c := range coefs {
		out = append(out, Term{Coef: c, Var: v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Var < out[j].Var })
	return out
}

// pcvTerms adds the PCV terms of a map operation, priced by the target.
func (m *measurer) pcvTerms(terms map[string]float64, op cfg.Op, mp *bpfprog.Map) {
	if m.costs == nil {
		return
	}
	for _, p := range bound.PCVPrices(m.costs.T, mp, op.Helper) {
		if !p.Priced || p.Unit[m.comp] == 0 {
			continue
		}
		v := pcvVar(p.Name, mp.Name)
		terms[v] += p.Unit[m.comp]
		if _, ok := m.pcvs[v]; !ok {
			m.pcvs[v] = PCV{Var: v, Map: mp.Name, Name: p.Name, Doc: interp.Model().PCVs[p.Name]}
		}
	}
}
