package perfiface

import (
	"math"
	"strconv"
	"strings"
)

// The source document's resolution-based merging, held against its own
// accuracy definition. Its step 3 gives each constraint a maximum impact,
// the largest cost difference between two paths that differ only in that
// constraint, and eliminates every constraint whose impact is below the
// resolution; the paths that then share every remaining outcome are one
// class. Each elimination is small, but their sum is not bounded: on a
// program whose cost is the sum of many small independent contributions
// the classes come out few and wide. DocumentMerge computes what that rule
// gives on the same paths as the interface, so that its class count can
// be set beside the worst error it makes, and beside this package's view
// (which keeps every input within r).

// DocumentMerge is the document's elimination at one resolution.
type DocumentMerge struct {
	Resolution float64
	// Constraints met on the paths; those with a measured impact (a pair of
	// paths that differ only there) below the resolution are eliminated.
	// A constraint with no such pair has no impact to measure and is kept.
	Constraints, Eliminated, Unpaired int
	// Classes and WorstError keep the unpaired constraints: WorstError is
	// the largest distance of a path's cost from its class's midpoint,
	// within Resolution when the classes meet the definition. Loose
	// eliminates the unpaired constraints too (no impact measured, taken
	// as none).
	Classes    int
	WorstError float64
	Loose      struct {
		Classes    int
		WorstError float64
	}
}

// DocumentMerge applies the document's elimination at r to the paths (and
// subtrees left open) of the interface.
func (it *Interface) DocumentMerge(r float64) DocumentMerge {
	x := it.items()
	impact, met := x.impacts()
	dm := DocumentMerge{Resolution: r, Constraints: len(met)}
	keep, strict := map[int32]bool{}, map[int32]bool{}
	for _, k := range met {
		switch d := impact[k]; {
		case math.IsNaN(d):
			dm.Unpaired++
			strict[k] = true
		case d < r:
			dm.Eliminated++
		default:
			keep[k], strict[k] = true, true
		}
	}
	dm.Classes, dm.WorstError = x.classesBy(strict)
	dm.Loose.Classes, dm.Loose.WorstError = x.classesBy(keep)
	return dm
}

// impacts is each constraint's maximum impact (NaN: no pair of items that
// differ only there) and the constraints the items meet, computed once.
func (x *items) impacts() ([]float64, []int32) {
	if x.impact != nil {
		return x.impact, x.met
	}
	impact := make([]float64, len(x.cons))
	for i := range impact {
		impact[i] = math.NaN()
	}
	// Items that differ only in constraint k share the rest of their route:
	// group them by that rest, and compare the two outcomes' costs.
	type side struct{ lo, hi [2]float64 }
	groups := map[string]*side{}
	var sb strings.Builder
	for i := range x.list {
		m := &x.list[i]
		for j, o := range m.route {
			sb.Reset()
			sb.WriteString(strconv.Itoa(int(o.key)))
			for jj, p := range m.route {
				if jj == j {
					continue
				}
				sb.WriteByte(',')
				sb.WriteString(strconv.Itoa(int(p.key)))
				if p.holds {
					sb.WriteByte('+')
				}
			}
			g := groups[sb.String()]
			if g == nil {
				g = &side{lo: [2]float64{math.Inf(1), math.Inf(1)}, hi: [2]float64{math.Inf(-1), math.Inf(-1)}}
				groups[sb.String()] = g
			}
			h := 0
			if o.holds {
				h = 1
			}
			g.lo[h], g.hi[h] = min(g.lo[h], m.lo), max(g.hi[h], m.hi)
		}
	}
	for key, g := range groups {
		if math.IsInf(g.lo[0], 1) || math.IsInf(g.lo[1], 1) {
			continue // one outcome only: no pair
		}
		k, _ := strconv.Atoi(key[:strings.IndexByte(key+",", ',')])
		d := max(g.hi[1]-g.lo[0], g.hi[0]-g.lo[1])
		if math.IsNaN(impact[k]) || d > impact[k] {
			impact[k] = d
		}
	}
	seen := map[int32]bool{}
	for i := range x.list {
		for _, o := range x.list[i].route {
			if !seen[o.key] {
				seen[o.key] = true
				x.met = append(x.met, o.key)
			}
		}
	}
	x.impact = impact
	return x.impact, x.met
}

// classesBy groups the items that share every outcome of the constraints
// kept: the number of groups and the largest half-width of their costs.
func (x *items) classesBy(keep map[int32]bool) (int, float64) {
	var sb strings.Builder
	type class struct{ lo, hi float64 }
	classes := map[string]*class{}
	for i := range x.list {
		m := &x.list[i]
		sb.Reset()
		for _, o := range m.route {
			if keep[o.key] {
				sb.WriteString(strconv.Itoa(int(o.key)))
				if o.holds {
					sb.WriteByte('+')
				}
				sb.WriteByte(',')
			}
		}
		c := classes[sb.String()]
		if c == nil {
			c = &class{lo: m.lo, hi: m.hi}
			classes[sb.String()] = c
		}
		c.lo, c.hi = min(c.lo, m.lo), max(c.hi, m.hi)
	}
	worst := 0.0
	for _, c := range classes {
		worst = max(worst, (c.hi-c.lo)/2)
	}
	return len(classes), worst
}
