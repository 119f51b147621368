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
	f := func(g string) float64 {
		if s, ok := scale[g]; ok {
			return s
		}
		return 1
	}
	c := t.clone()
	c.PerPacket = c.PerPacket.Times(f(GroupPerPacket))
	for class, v := range c.Classes {
		c.Classes[class] = v.Times(f(ClassGroup(class)))
	}
	for key, v := range c.Chain {
		c.Chain[key] = v.Times(f(GroupChain))
	}
	c.Taken = c.Taken.Times(f(GroupBranch))
	c.NotTaken = c.NotTaken.Times(f(GroupBranch))
	for _, kinds := range c.Memory {
		for k, a := range kinds {
			a.Cost = a.Cost.Times(f(GroupMemory))
			kinds[k] = a
		}
	}
	for helper, byType := range c.Helpers {
		for k, v := range byType {
			byType[k] = v.Times(f(HelperGroup(helper)))
		}
	}
	for _, byType := range c.PCV {
		for k, v := range byType {
			byType[k] = v.Times(f(GroupHelper))
		}
	}
	for helper, byType := range c.HelperKeys {
		for mt, ks := range byType {
			ks = slices.Clone(ks)
			for i := range ks {
				ks[i].Cost = ks[i].Cost.Times(f(HelperGroup(helper)))
			}
			byType[mt] = ks
		}
	}
	for helper, byType := range c.HelperOutcomes {
		for _, byOutcome := range byType {
			for o, v := range byOutcome {
				byOutcome[o] = v.Times(f(HelperGroup(helper)))
			}
		}
	}
	return c
}

// WithGroups returns a copy of t whose costs in the named groups are
// from's, where from has the same cost; t's other costs are kept.
func (t *Target) WithGroups(from *Target, groups ...string) *Target {
	in := func(g string) bool { return slices.Contains(groups, g) }
	c := t.clone()
	if in(GroupPerPacket) {
		c.PerPacket = from.PerPacket
	}
	if in(GroupBranch) {
		c.Taken, c.NotTaken = from.Taken, from.NotTaken
	}
	for class := range c.Classes {
		if v, ok := from.Classes[class]; ok && in(ClassGroup(class)) {
			c.Classes[class] = v
		}
	}
	for key := range c.Chain {
		if v, ok := from.Chain[key]; ok && in(GroupChain) {
			c.Chain[key] = v
		}
	}
	for r, kinds := range c.Memory {
		for k, a := range kinds {
			if b, ok := from.Memory[r][k]; ok && in(GroupMemory) {
				a.Cost = b.Cost
				kinds[k] = a
			}
		}
	}
	for helper, byType := range c.Helpers {
		for k := range byType {
			if v, ok := from.Helpers[helper][k]; ok && in(HelperGroup(helper)) {
				byType[k] = v
			}
		}
	}
	for pcv, byType := range c.PCV {
		for k := range byType {
			if v, ok := from.PCV[pcv][k]; ok && in(GroupHelper) {
				byType[k] = v
			}
		}
	}
	for helper, byType := range c.HelperKeys {
		for mt := range byType {
			if ks, ok := from.HelperKeys[helper][mt]; ok && in(HelperGroup(helper)) {
				byType[mt] = slices.Clone(ks)
			}
		}
	}
	for helper, byType := range c.HelperOutcomes {
		for mt, byOutcome := range byType {
			for o := range byOutcome {
				if v, ok := from.HelperOutcomes[helper][mt][o]; ok && in(HelperGroup(helper)) {
					byOutcome[o] = v
				}
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
