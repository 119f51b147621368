package target

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"

	"go.yaml.in/yaml/v3"
)

// Marshal writes t as a target file that Parse reads back into the same
// target. Keys come in the order of targets/README.md, cost vectors in flow
// style ({cpu: 0.3}) with only their non-zero components.
func Marshal(t *Target) ([]byte, error) {
	root := mapping(false)
	add(root, "name", str(t.Name))
	add(root, "description", str(t.Description))
	add(root, "source", str(t.Source))
	if t.Basis != "" {
		add(root, "basis", str(t.Basis))
	}
	if t.JIT != "" {
		add(root, "jit", str(t.JIT))
	}
	comps := &yaml.Node{Kind: yaml.SequenceNode}
	for _, c := range t.Components {
		n := mapping(false)
		add(n, "name", str(c.Name))
		add(n, "unit", str(c.Unit))
		add(n, "capacity", num(c.Capacity))
		add(n, "description", str(c.Description))
		comps.Content = append(comps.Content, n)
	}
	add(root, "components", comps)
	add(root, "per_packet", t.vec(t.PerPacket))
	limits := mapping(false)
	add(limits, "packet_rate", num(t.PacketRate))
	add(limits, "line_rate", num(t.LineRate))
	add(limits, "wire_overhead", num(float64(t.WireOverhead)))
	add(limits, "min_packet", num(float64(t.MinPacket)))
	add(root, "limits", limits)
	if t.BlockComponent >= 0 && t.BlockComponent < len(t.Components) {
		b := mapping(false)
		add(b, "min", num(t.BlockMin))
		add(b, "component", str(t.Components[t.BlockComponent].Name))
		add(root, "blocking", b)
	}
	classes := mapping(false)
	for _, c := range classNames {
		add(classes, c, t.vec(t.Classes[c]))
	}
	add(root, "classes", classes)
	branch := mapping(false)
	add(branch, "taken", t.vec(t.Taken))
	add(branch, "not_taken", t.vec(t.NotTaken))
	add(root, "branch", branch)
	memory := mapping(false)
	for _, region := range regionNames {
		kinds := mapping(false)
		for _, kind := range accessNames {
			a := t.Memory[region][kind]
			n := mapping(true)
			add(n, "cost", t.vec(a.Cost))
			if a.Latency > 0 {
				add(n, "latency", num(a.Latency))
			}
			add(kinds, kind, n)
		}
		add(memory, region, kinds)
	}
	add(root, "memory", memory)
	helpers := mapping(false)
	for _, h := range defaultLast(keys(t.Helpers)) {
		byMap := mapping(false)
		for _, mt := range defaultFirst(keys(t.Helpers[h])) {
			add(byMap, mt, t.vec(t.Helpers[h][mt]))
		}
		add(helpers, h, byMap)
	}
	add(root, "helpers", helpers)
	if len(t.HelperKeys) > 0 {
		add(root, "helper_keys", t.helperKeysNode())
	}
	if len(t.HelperOutcomes) > 0 {
		add(root, "helper_outcomes", t.helperOutcomesNode())
	}
	if len(t.Unsupported) > 0 {
		u := mapping(false)
		for _, k := range keys(t.Unsupported) {
			add(u, k, str(t.Unsupported[k]))
		}
		add(root, "unsupported", u)
	}
	if len(t.Estimated) > 0 {
		e := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
		for _, k := range keys(t.Estimated) {
			e.Content = append(e.Content, str(k))
		}
		add(root, "estimated", e)
	}
	if len(t.PCV) > 0 {
		pcv := mapping(false)
		for _, mt := range keys(t.PCV) {
			byPCV := mapping(true)
			for _, name := range keys(t.PCV[mt]) {
				add(byPCV, name, t.vec(t.PCV[mt][name]))
			}
			add(pcv, mt, byPCV)
		}
		add(root, "pcv", pcv)
	}
	if ch := t.chainNode(); ch != nil {
		add(root, "chain", ch)
	}
	if c := t.Calibration; c != nil {
		add(root, "calibration", calibrationNode(c))
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(root); err != nil {
		return nil, fmt.Errorf("write target %s: %w", t.Name, err)
	}
	return buf.Bytes(), enc.Close()
}

func spreadNode(spreads map[string]Spread) *yaml.Node {
	n := mapping(false)
	for _, k := range keys(spreads) {
		s := spreads[k]
		e := mapping(true)
		add(e, "min", num(s.Min))
		add(e, "median", num(s.Median))
		add(e, "high", num(s.High))
		add(e, "max", num(s.Max))
		if s.Variant != "" {
			add(e, "variant", str(s.Variant))
		}
		add(n, k, e)
	}
	return n
}

func calibrationNode(c *Calibration) *yaml.Node {
	n := mapping(false)
	add(n, "cpu", str(c.CPU))
	if c.Microcode != "" {
		add(n, "microcode", str(c.Microcode))
	}
	add(n, "kernel", str(c.Kernel))
	if c.JIT != "" {
		add(n, "jit", str(c.JIT))
	}
	add(n, "date", str(c.Date))
	add(n, "processor", num(float64(c.Processor)))
	add(n, "runs", num(float64(c.Runs)))
	add(n, "percentile", num(c.Percentile))
	add(n, "model", str(c.Model))
	add(n, "spread", spreadNode(c.Spread))
	if len(c.TypicalSpread) > 0 {
		add(n, "typical_spread", spreadNode(c.TypicalSpread))
	}
	if len(c.Notes) > 0 {
		notes := &yaml.Node{Kind: yaml.SequenceNode}
		for _, note := range c.Notes {
			notes.Content = append(notes.Content, str(note))
		}
		add(n, "notes", notes)
	}
	if f := c.Fit; f != nil {
		fn := mapping(false)
		add(fn, "kind", str(f.Kind))
		sc := mapping(true)
		for _, g := range keys(f.Scale) {
			add(sc, g, num(f.Scale[g]))
		}
		add(fn, "scale", sc)
		if len(f.ExpectedScale) > 0 {
			es := mapping(true)
			for _, g := range keys(f.ExpectedScale) {
				add(es, g, num(f.ExpectedScale[g]))
			}
			add(fn, "expected_scale", es)
		}
		progs := &yaml.Node{Kind: yaml.SequenceNode}
		for _, p := range f.Programs {
			progs.Content = append(progs.Content, str(p))
		}
		add(fn, "programs", progs)
		add(fn, "samples", num(float64(f.Samples)))
		add(fn, "percentile", num(f.Percentile))
		add(fn, "err_min", num(f.ErrMin))
		add(fn, "err_median", num(f.ErrMedian))
		add(fn, "err_max", num(f.ErrMax))
		if f.Margin != 0 {
			add(fn, "margin", num(f.Margin))
		}
		add(n, "fit", fn)
	}
	return n
}

// vec is a cost vector as a flow mapping of its non-zero components.
func (t *Target) vec(v Vec) *yaml.Node {
	n := mapping(true)
	for i, c := range t.Components {
		if v[i] != 0 {
			add(n, c.Name, num(v[i]))
		}
	}
	return n
}

func mapping(flow bool) *yaml.Node {
	n := &yaml.Node{Kind: yaml.MappingNode}
	if flow {
		n.Style = yaml.FlowStyle
	}
	return n
}

func add(m *yaml.Node, key string, v *yaml.Node) {
	m.Content = append(m.Content, str(key), v)
}

func str(s string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
	if len(s) > 80 {
		n.Style = yaml.FoldedStyle // wrapped at 80 columns
	}
	return n
}

// num writes the shortest decimal that reads back as exactly f.
func num(f float64) *yaml.Node {
	if f == math.Trunc(f) && math.Abs(f) < 1e15 {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.FormatFloat(f, 'f', -1, 64)}
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!float", Value: strconv.FormatFloat(f, 'g', -1, 64)}
}

func keys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func defaultFirst(ks []string) []string {
	if i := slices.Index(ks, "default"); i > 0 {
		ks = append([]string{"default"}, slices.Delete(ks, i, i+1)...)
	}
	return ks
}

func defaultLast(ks []string) []string {
	if i := slices.Index(ks, "default"); i >= 0 {
		ks = append(slices.Delete(ks, i, i+1), "default")
	}
	return ks
}
