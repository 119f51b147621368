package target

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// file is the YAML form of a target; targets/README.md documents it.
type file struct {
	Name        string      `yaml:"name"`
	Description string      `yaml:"description"`
	Source      string      `yaml:"source"`
	Basis       string      `yaml:"basis"`
	JIT         string      `yaml:"jit"`
	Components  []Component `yaml:"components"`
	PerPacket   costMap     `yaml:"per_packet"`
	Limits      struct {
		PacketRate   float64 `yaml:"packet_rate"`
		LineRate     float64 `yaml:"line_rate"`
		WireOverhead int     `yaml:"wire_overhead"`
		MinPacket    int     `yaml:"min_packet"`
	} `yaml:"limits"`
	Blocking struct {
		Min       float64 `yaml:"min"`
		Component string  `yaml:"component"`
	} `yaml:"blocking"`
	Classes map[string]costMap `yaml:"classes"`
	Branch  struct {
		Taken    costMap `yaml:"taken"`
		NotTaken costMap `yaml:"not_taken"`
	} `yaml:"branch"`
	Memory         map[string]map[string]accessYAML `yaml:"memory"`
	Helpers        map[string]map[string]costMap    `yaml:"helpers"`
	HelperKeys     keyCostsYAML                     `yaml:"helper_keys"`
	HelperOutcomes outcomesYAML                     `yaml:"helper_outcomes"`
	Unsupported    map[string]string                `yaml:"unsupported"`
	Estimated      []string                         `yaml:"estimated"`
	PCV            map[string]map[string]costMap    `yaml:"pcv"`
	Chain          map[string]costMap               `yaml:"chain"`
	Calibration    *Calibration                     `yaml:"calibration"`
}

// costMap is a cost vector written as component name → amount; it keeps
// its line for error messages.
type costMap struct {
	m    map[string]float64
	line int
}

func (c *costMap) UnmarshalYAML(n *yaml.Node) error {
	c.line = n.Line
	return n.Decode(&c.m)
}

type accessYAML struct {
	Cost    costMap `yaml:"cost"`
	Latency float64 `yaml:"latency"`
}

// Classes the cost model prices; Class maps instructions onto them.
var classNames = []string{
	"alu32", "alu64", "shift32", "shift64", "shift64_reg", "mul", "div", "mod", "swap",
	"ld_imm64", "cond32", "cond64", "jump", "call", "return", "exit",
}

// Memory regions and access kinds a target prices.
var (
	regionNames = []string{"packet", "stack", "ctx", "map_value", "unknown"}
	accessNames = []string{"load", "store", "atomic"}
)

func (f *file) target() (*Target, error) {
	t := &Target{
		Name: f.Name, Description: f.Description, Source: f.Source, JIT: f.JIT, Components: f.Components,
		PacketRate: f.Limits.PacketRate, LineRate: f.Limits.LineRate,
		WireOverhead: f.Limits.WireOverhead, MinPacket: f.Limits.MinPacket,
		BlockMin: f.Blocking.Min, Classes: map[string]Vec{}, Memory: map[string]map[string]Access{},
		Helpers: map[string]map[string]Vec{}, Unsupported: f.Unsupported, Estimated: map[string]bool{},
	}
	switch f.Basis {
	case BasisCalibrated, BasisEstimated:
		t.Basis = f.Basis
	case "":
		// A measured file says so by its calibration section; a table
		// written by hand is an estimate unless it says otherwise.
		t.Basis = BasisEstimated
		if f.Calibration != nil {
			t.Basis = BasisCalibrated
		}
	default:
		return nil, fmt.Errorf("target %s: basis must be %s or %s, not %q", f.Name, BasisCalibrated, BasisEstimated, f.Basis)
	}
	switch {
	case t.Name == "":
		return nil, fmt.Errorf("target has no name")
	case len(t.Components) == 0 || len(t.Components) > MaxComponents:
		return nil, fmt.Errorf("target %s: needs 1 to %d components, has %d", t.Name, MaxComponents, len(t.Components))
	case t.MinPacket <= 0:
		return nil, fmt.Errorf("target %s: limits.min_packet must be positive", t.Name)
	case t.JIT != "" && t.JIT != "nfp":
		return nil, fmt.Errorf("target %s: jit %q is not known (known: nfp)", t.Name, t.JIT)
	}
	for _, c := range t.Components {
		if c.Name == "" || c.Capacity <= 0 {
			return nil, fmt.Errorf("target %s: component %q needs a name and a positive capacity", t.Name, c.Name)
		}
	}
	vec := t.vecOf
	var err error
	if t.PerPacket, err = vec("per_packet", f.PerPacket); err != nil {
		return nil, err
	}
	if t.Taken, err = vec("branch.taken", f.Branch.Taken); err != nil {
		return nil, err
	}
	if t.NotTaken, err = vec("branch.not_taken", f.Branch.NotTaken); err != nil {
		return nil, err
	}
	t.BlockComponent = t.ComponentIndex(f.Blocking.Component)
	if f.Blocking.Component != "" && t.BlockComponent < 0 {
		return nil, fmt.Errorf("blocking: unknown component %q", f.Blocking.Component)
	}
	for _, name := range classNames {
		c, ok := f.Classes[name]
		if !ok {
			return nil, fmt.Errorf("classes: missing %q (needs all of %s)", name, strings.Join(classNames, ", "))
		}
		if t.Classes[name], err = vec("classes."+name, c); err != nil {
			return nil, err
		}
	}
	for name := range f.Classes {
		if !slices.Contains(classNames, name) {
			return nil, fmt.Errorf("classes: unknown class %q", name)
		}
	}
	for _, region := range regionNames {
		kinds, ok := f.Memory[region]
		if !ok {
			return nil, fmt.Errorf("memory: missing region %q", region)
		}
		t.Memory[region] = map[string]Access{}
		for _, kind := range accessNames {
			a, ok := kinds[kind]
			if !ok {
				return nil, fmt.Errorf("memory.%s: missing %q", region, kind)
			}
			v, err := vec("memory."+region+"."+kind, a.Cost)
			if err != nil {
				return nil, err
			}
			if a.Latency > 0 && t.BlockComponent < 0 {
				return nil, fmt.Errorf("memory.%s.%s: a latency needs blocking.component", region, kind)
			}
			t.Memory[region][kind] = Access{Cost: v, Latency: a.Latency}
		}
	}
	for helper, byMap := range f.Helpers {
		if _, ok := byMap["default"]; !ok {
			return nil, fmt.Errorf("helpers.%s: missing \"default\"", helper)
		}
		t.Helpers[helper] = map[string]Vec{}
		for mt, c := range byMap {
			if t.Helpers[helper][mt], err = vec("helpers."+helper+"."+mt, c); err != nil {
				return nil, err
			}
		}
	}
	if _, ok := t.Helpers["default"]; !ok {
		return nil, fmt.Errorf("helpers: missing \"default\" (the cost of helpers not listed)")
	}
	if err := f.helperKeys(t); err != nil {
		return nil, err
	}
	if err := f.helperOutcomes(t); err != nil {
		return nil, err
	}
	for _, e := range f.Estimated {
		t.Estimated[e] = true
	}
	t.PCV = map[string]map[string]Vec{}
	for mt, byPCV := range f.PCV {
		t.PCV[mt] = map[string]Vec{}
		for name, c := range byPCV {
			if t.PCV[mt][name], err = vec("pcv."+mt+"."+name, c); err != nil {
				return nil, err
			}
		}
	}
	if err := f.chain(t); err != nil {
		return nil, err
	}
	if c := f.Calibration; c != nil {
		if err := c.check(); err != nil {
			return nil, err
		}
		t.Calibration = c
	}
	return t, nil
}

// vecOf reads a cost vector of t's components; what names it in errors.
func (t *Target) vecOf(what string, c costMap) (Vec, error) {
	var v Vec
	for name, amount := range c.m {
		i := t.ComponentIndex(name)
		if i < 0 {
			return v, fmt.Errorf("line %d: %s: unknown component %q", c.line, what, name)
		}
		if amount < 0 {
			return v, fmt.Errorf("line %d: %s: negative cost %g", c.line, what, amount)
		}
		v[i] = amount
	}
	return v, nil
}

// Summary is a one-line description of a target for listings.
func (t *Target) Summary() string {
	var cs []string
	for _, c := range t.Components {
		cs = append(cs, c.Name)
	}
	sort.Strings(cs)
	return fmt.Sprintf("%s [components: %s]", t.Description, strings.Join(cs, ", "))
}
