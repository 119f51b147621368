package bound

import (
	"fmt"
	"io"
	"strings"

	"github.com/cilium/ebpf/asm"

	"github.com/dpperf/dpperf/cfg"
	"github.com/dpperf/dpperf/symex"
	"github.com/dpperf/dpperf/target"
)

// Unknown and dearest name a lookup in LookupPrice whose outcome the path
// does not fix, and the price of the dearest outcome.
const (
	outcomeUnknown = "unknown"
	pricedDearest  = "dearest"
)

// LookupPrice is a map operation on a reported path (a lookup, update or
// delete) and the price it was given: that of the outcome the path's
// example takes, where the target prices outcomes (target.HelperOutcomes)
// and the path fixes it (symex.Lookup), else the dearest outcome.
type LookupPrice struct {
	Insn   int    `json:"insn"`
	Helper string `json:"helper"` // map_lookup_elem, map_update_elem, map_delete_elem
	Map    string `json:"map,omitempty"`
	// Outcome: "hit" or "miss" (a lookup or delete), "replace" or
	// "insert" (an update), or "unknown" (no example, or a path that
	// leaves it open).
	Outcome string             `json:"outcome"`
	Priced  string             `json:"priced_at"` // the outcome, or "dearest"
	Cost    map[string]float64 `json:"cost"`
}

// outcomeName names the outcome of a map operation by helper: whether its
// key was in the map.
func outcomeName(fn asm.BuiltinFunc, found bool) string {
	switch {
	case fn == asm.FnMapUpdateElem && found:
		return target.OutcomeReplace
	case fn == asm.FnMapUpdateElem:
		return target.OutcomeInsert
	case found:
		return target.OutcomeHit
	}
	return target.OutcomeMiss
}

// pricedByOutcome reports whether a helper's cost depends on whether the
// key is in the map: the operations symex.Lookup lists.
func pricedByOutcome(fn asm.BuiltinFunc) bool {
	return fn == asm.FnMapLookupElem || fn == asm.FnMapUpdateElem || fn == asm.FnMapDeleteElem
}

// OutcomeCost prices a path as ExactCost does, except for the map
// operations whose outcome the path fixes: lookups holds the path's
// lookups, updates and deletes in path order with the outcome of each
// (symex.Example.Lookups; nil: none known), and each is priced at its
// outcome's price where the target has one (target.HelperOutcomeCost),
// the dearest otherwise. It returns the operations as priced.
// OutcomeCost(p, l) never exceeds ExactCost(p): every outcome's price is
// at most the dearest the edges carry. Targets with a JIT price the
// operations as translated, by the dearest outcome.
func (c *Costed) OutcomeCost(edges []int32, lookups []symex.Lookup) (target.Vec, []LookupPrice) {
	total := c.ExactCost(edges)
	if c.JIT != nil {
		return total, nil
	}
	cur := &lookupCursor{known: lookups}
	for _, e := range edges {
		for _, op := range c.G.Nodes[c.G.Edges[e].From].Ops {
			if op.Kind != cfg.OpHelper || !pricedByOutcome(op.Helper) {
				continue
			}
			saving := c.priceLookup(cur, op)
			for k := range total {
				total[k] = max(0, total[k]-saving[k])
			}
		}
	}
	return total, cur.priced
}

// lookupCursor walks a path's known lookup outcomes as the path meets its
// lookups.
type lookupCursor struct {
	known  []symex.Lookup
	next   int
	priced []LookupPrice
}

// priceLookup prices lookup op, the next the path meets, by its outcome;
// it returns what that saves over the dearest outcome the edges carry.
func (c *Costed) priceLookup(cur *lookupCursor, op cfg.Op) (saving target.Vec) {
	t := c.T
	name := target.HelperName(op.Helper)
	mt, mapName, keyBytes := "", "", 0
	if op.Map >= 0 && c.G.Maps[op.Map] != nil {
		m := c.G.Maps[op.Map]
		mt, mapName, keyBytes = target.MapTypeName(m.Type), m.Name, int(m.KeySize)
	}
	keyed, _, _ := t.HelperKeyCost(name, mt, keyBytes)
	lp := LookupPrice{Insn: int(op.Insn), Helper: name, Map: mapName, Outcome: outcomeUnknown, Priced: pricedDearest}
	if cur.next < len(cur.known) && cur.known[cur.next].Insn == int(op.Insn) {
		known := cur.known[cur.next]
		cur.next++
		if !known.Unknown {
			lp.Outcome = outcomeName(op.Helper, known.Found)
			if v, ok := t.HelperOutcomeCost(name, mt, keyBytes, lp.Outcome); ok {
				lp.Priced = lp.Outcome
				for k := range saving {
					saving[k] = keyed[k] - v[k]
				}
			}
		}
	} else {
		cur.next = len(cur.known) // the outcomes no longer follow the path
	}
	cost := map[string]float64{}
	for k, comp := range t.Components {
		cost[comp.Name] = round(keyed[k] - saving[k])
	}
	lp.Cost = cost
	cur.priced = append(cur.priced, lp)
	return saving
}

// lookupsOf is the lookups of an example (nil: none known).
func lookupsOf(ex *symex.Example) []symex.Lookup {
	if ex == nil {
		return nil
	}
	return ex.Lookups
}

// PacketRateWith is PacketRateOf for a path whose lookups take the given
// outcomes (OutcomeCost), priced as the search prices a satisfiable path
// with that example: the reported bound's path, given its example's
// lookups, comes out at the bound's rate.
func (c *Costed) PacketRateWith(edges []int32, lookups []symex.Lookup) float64 {
	cost, _ := c.OutcomeCost(edges, lookups)
	return c.bound(c.pathWith(cost, c.PathSize(edges), PacketRate)).PacketRate
}

// KnownLookups is the outcomes of a reported path's map operations, as
// its example gives them, for OutcomeCost.
func (pr *PathReport) KnownLookups() []symex.Lookup {
	var out []symex.Lookup
	for _, l := range pr.Lookups {
		found := l.Outcome == target.OutcomeHit || l.Outcome == target.OutcomeReplace
		out = append(out, symex.Lookup{Insn: l.Insn, Found: found, Unknown: l.Outcome == outcomeUnknown})
	}
	return out
}

// writeLookups writes the outcome each of a path's map lookups was
// priced at.
func writeLookups(w io.Writer, ls []LookupPrice, comps []ComponentInfo) {
	for _, l := range ls {
		var cost []string
		for _, c := range comps {
			cost = append(cost, fmt.Sprintf("%.6g %s", l.Cost[c.Name], c.Unit))
		}
		fmt.Fprintf(w, "  map %s at insn %d in %s: %s, priced at %s (%s)\n", opWord(l.Helper), l.Insn, l.Map, l.Outcome, l.Priced, strings.Join(cost, ", "))
	}
}

// opWord is the word for a map helper in the text report.
func opWord(helper string) string {
	switch helper {
	case target.HelperName(asm.FnMapUpdateElem):
		return "update"
	case target.HelperName(asm.FnMapDeleteElem):
		return "delete"
	}
	return "lookup"
}
