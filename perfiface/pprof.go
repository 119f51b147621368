package perfiface

import (
	"fmt"
	"io"

	"github.com/google/pprof/profile"
)

// WriteProfile writes the classes of view v as a pprof profile
// (github.com/google/pprof/profile): one sample per class, its stack the
// tests on the way to it from the root (a frame per test, "not ..." where
// it fails) and the class itself on top, so that a flame graph shows where
// in the decision tree the cost lies. Without a trace (d nil) a class's
// value is its cost, the middle of its range; with one it is what the
// trace's packets of the class cost in all, and a second value counts
// them. Costs are in thousandths of the interface's unit.
func (it *Interface) WriteProfile(w io.Writer, v *View, d *Deployment) error {
	unit := it.Unit
	p := &profile.Profile{SampleType: []*profile.ValueType{{Type: "cost", Unit: "milli" + unit}}, DefaultSampleType: "cost"}
	if d != nil {
		v = d.View
		p.SampleType = append(p.SampleType, &profile.ValueType{Type: "packets", Unit: "count"})
	}
	p.Mapping = []*profile.Mapping{{ID: 1, File: it.Program, HasFunctions: true}}
	funcs := map[string]*profile.Function{}
	locs := map[string]*profile.Location{}
	frame := func(name string) *profile.Location {
		if l := locs[name]; l != nil {
			return l
		}
		f := funcs[name]
		if f == nil {
			f = &profile.Function{ID: uint64(len(p.Function) + 1), Name: name, SystemName: name, Filename: it.Program}
			funcs[name] = f
			p.Function = append(p.Function, f)
		}
		l := &profile.Location{ID: uint64(len(p.Location) + 1), Mapping: p.Mapping[0], Line: []profile.Line{{Function: f}}}
		locs[name] = l
		p.Location = append(p.Location, l)
		return l
	}
	id := 0
	eachClass(v.Root, func(leaf *VNode, route []Step) {
		stack := []*profile.Location{frame(fmt.Sprintf("class %d: %s", id, costRange(leaf)))}
		for i := len(route) - 1; i >= 0; i-- {
			name := route[i].Test
			if !route[i].Holds {
				name = "not " + name
			}
			stack = append(stack, frame(name))
		}
		cost := (leaf.Lo + leaf.Hi) / 2
		value := []int64{int64(cost*1000 + 0.5)}
		if d != nil {
			c := d.ClassOf(leaf)
			sum := 0.0
			for _, x := range c.Costs {
				sum += x
			}
			value = []int64{int64(sum*1000 + 0.5), int64(c.Packets)}
		}
		p.Sample = append(p.Sample, &profile.Sample{Location: stack, Value: value})
		id++
	})
	if err := p.CheckValid(); err != nil {
		return err
	}
	return p.Write(w)
}

// costRange is a class's cost as the text output shows it: one figure, or
// its range.
func costRange(leaf *VNode) string {
	if leaf.Lo == leaf.Hi {
		return fmt.Sprintf("%.4g", leaf.Lo)
	}
	return fmt.Sprintf("%.4g..%.4g", leaf.Lo, leaf.Hi)
}
