package target

import (
	"maps"
	"slices"
	"strings"
)

// Cost groups: the parts of a target whose costs a fit scales together.
// Every cost of a target belongs to exactly one group.
const (
	GroupALU       = "alu"        // arithmetic, logic, shifts, byte swaps, 64-bit immediates
	GroupBranch    = "branch"     // conditional and unconditional jumps, taken and not taken
	GroupMemory    = "memory"     // loads, stores and atomics of every region
	GroupCall      = "call"       // bpf-to-bpf calls, returns and the program's exit
	GroupHelper    = "helper"     // helper calls but map writes, with the PCV costs
	GroupPerPacket = "per_packet" // the per-packet overhead
	GroupChain     = "chain"      // the latency of each block's longest dependency chain (Chain)
	GroupMapWrite  = "map_write"  // map_update_elem and map_delete_elem, every outcome
)

// Groups lists the cost groups in a fixed order.
var Groups = []string{GroupALU, GroupBranch, GroupMemory, GroupCall, GroupHelper, GroupPerPacket, GroupChain, GroupMapWrite}

// HelperGroup returns the group of a helper (kernel name without bpf_).
// The calls that change a map's contents are a group of their own: an
// insert into a growing table costs what no lookup does, and paths that
// time steadily in a repeated run (what a fit trains on) rarely insert.
func HelperGroup(helper string) string {
	switch helper {
	case "map_update_elem", "map_delete_elem":
		return GroupMapWrite
	}
	return GroupHelper
}

// ClassGroup returns the group of an instruction class (Class).
func ClassGroup(class string) string {
	switch {
	case strings.HasPrefix(class, "cond") || class == "jump":
		return GroupBranch
	case class == "call" || class == "return" || class == "exit":
		return GroupCall
	}
	return GroupALU
}

// Scaled returns a copy of t whose costs in each group are multiplied by
// scale[group]; groups scale does not name keep their costs.
func (t *Target) Scaled(scale map[string]float64) *Target {
	return t.mapCosts(nil, func(g string, v Vec, _ *Vec) Vec {
		if s, ok := scale[g]; ok {
			return v.Times(s)
		}
		return v
	})
}

// WithGroups returns a copy of t whose costs in the named groups are
// from's, where from has the same cost; t's other costs are kept.
func (t *Target) WithGroups(from *Target, groups ...string) *Target {
	return t.mapCosts(from, func(g string, v Vec, w *Vec) Vec {
		if w != nil && slices.Contains(groups, g) {
			return *w
		}
		return v
	})
}

// mapCosts returns a copy of t with every cost v replaced by f(group, v,
// w), where w is the same cost in other (nil where other has none, or
// other is nil): the one walk over a target's costs that Scaled and
// WithGroups share, so that a cost is in exactly one group for both.
func (t *Target) mapCosts(other *Target, f func(group string, v Vec, w *Vec) Vec) *Target {
	var o Target
	if other != nil {
		o = *other
	}
	same := func(w Vec, ok bool) *Vec {
		if !ok {
			return nil
		}
		return &w
	}
	c := t.clone()
	c.PerPacket = f(GroupPerPacket, c.PerPacket, same(o.PerPacket, other != nil))
	c.Taken = f(GroupBranch, c.Taken, same(o.Taken, other != nil))
	c.NotTaken = f(GroupBranch, c.NotTaken, same(o.NotTaken, other != nil))
	for class, v := range c.Classes {
		w, ok := o.Classes[class]
		c.Classes[class] = f(ClassGroup(class), v, same(w, ok))
	}
	for key, v := range c.Chain {
		w, ok := o.Chain[key]
		c.Chain[key] = f(GroupChain, v, same(w, ok))
	}
	for r, kinds := range c.Memory {
		for k, a := range kinds {
			b, ok := o.Memory[r][k]
			a.Cost = f(GroupMemory, a.Cost, same(b.Cost, ok))
			kinds[k] = a
		}
	}
	for helper, byType := range c.Helpers {
		for k, v := range byType {
			w, ok := o.Helpers[helper][k]
			byType[k] = f(HelperGroup(helper), v, same(w, ok))
		}
	}
	for pcv, byType := range c.PCV {
		for k, v := range byType {
			w, ok := o.PCV[pcv][k]
			byType[k] = f(GroupHelper, v, same(w, ok))
		}
	}
	for helper, byType := range c.HelperKeys {
		for mt, ks := range byType {
			ks = slices.Clone(ks)
			for i := range ks {
				j := slices.IndexFunc(o.HelperKeys[helper][mt], func(k KeyCost) bool { return k.Bytes == ks[i].Bytes })
				var w *Vec
				if j >= 0 {
					w = &o.HelperKeys[helper][mt][j].Cost
				}
				ks[i].Cost = f(HelperGroup(helper), ks[i].Cost, w)
			}
			byType[mt] = ks
		}
	}
	for helper, byType := range c.HelperOutcomes {
		for mt, byOutcome := range byType {
			for out, v := range byOutcome {
				w, ok := o.HelperOutcomes[helper][mt][out]
				byOutcome[out] = f(HelperGroup(helper), v, same(w, ok))
			}
		}
	}
	return c
}

// Only returns a copy of t that keeps the costs of one group and prices
// everything else at zero: the group's share of a path's cost.
func (t *Target) Only(group string) *Target {
	scale := map[string]float64{}
	for _, g := range Groups {
		scale[g] = 0
	}
	scale[group] = 1
	return t.Scaled(scale)
}

// clone copies t deeply enough that Scaled may change every cost.
func (t *Target) clone() *Target {
	c := *t
	c.Classes = maps.Clone(t.Classes)
	c.Chain = maps.Clone(t.Chain)
	c.Memory = map[string]map[string]Access{}
	for r, kinds := range t.Memory {
		c.Memory[r] = maps.Clone(kinds)
	}
	deep := func(m map[string]map[string]Vec) map[string]map[string]Vec {
		if m == nil {
			return nil
		}
		out := map[string]map[string]Vec{}
		for k, v := range m {
			out[k] = maps.Clone(v)
		}
		return out
	}
	c.Helpers, c.PCV = deep(t.Helpers), deep(t.PCV)
	c.HelperKeys = map[string]map[string][]KeyCost{}
	for h, byType := range t.HelperKeys {
		c.HelperKeys[h] = maps.Clone(byType)
	}
	c.HelperOutcomes = map[string]map[string]map[string]Vec{}
	for h, byType := range t.HelperOutcomes {
		c.HelperOutcomes[h] = map[string]map[string]Vec{}
		for mt, byOutcome := range byType {
			c.HelperOutcomes[h][mt] = maps.Clone(byOutcome)
		}
	}
	return &c
}

// Times returns v scaled by s.
func (v Vec) Times(s float64) Vec {
	for i := range v {
		v[i] *= s
	}
	return v
}
