package perfiface

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/dpperf/dpperf/symex"
	"github.com/dpperf/dpperf/target"
)

// metricTitle describes a metric for headers.
func (it *Interface) metricTitle() string {
	switch it.Metric {
	case MetricInsns:
		return "BPF instructions"
	case MetricMem:
		return "memory accesses (BPF loads and stores)"
	}
	return fmt.Sprintf("cost in %s under target %s", it.Unit, it.Target)
}

// packetsTitle says which packets the exploration considered.
func (it *Interface) packetsTitle() string {
	if it.WellFormed {
		return "well-formed (" + symex.WellFormedSummary + ")"
	}
	return "any bytes (malformed headers included; --well-formed leaves them out)"
}

// Python writes a view as a Python function, the form users of the
// original tool know: nested ifs over packet fields and map membership
// that return the cost of the input's class.
func (it *Interface) Python(w io.Writer, v *View, header ...string) error {
	bw := bufio.NewWriter(w)
	if err := it.pyFunc(&pyWriter{w: bw}, v, header); err != nil {
		return err
	}
	return bw.Flush()
}

// pyFunc writes the interface function.
func (it *Interface) pyFunc(p *pyWriter, v *View, header []string) error {
	it.pyHeader(p, v, header)
	if v.Root == nil {
		p.line(1, "raise ValueError('no feasible path')")
	} else {
		p.node(1, v.Root, false)
	}
	return p.err
}

// pyHeader writes the def line and the comments that describe the
// interface.
func (it *Interface) pyHeader(p *pyWriter, v *View, header []string) {
	p.line(0, "def %s(pkt, state):", it.funcName())
	p.line(1, "# Program: %s", it.Program)
	p.line(1, "# Metric: %s", it.metricTitle())
	p.line(1, "# Packets: %s", it.packetsTitle())
	if v.Resolution <= 1e-9 || (it.Metric != MetricCost && v.Resolution <= 1) {
		p.line(1, "# Resolution: exact (paths with equal cost merged only)")
	} else {
		p.line(1, "# Resolution: %s (every input is within this of its class's value, the middle of the class)", trimFloat(v.Resolution))
	}
	for _, h := range header {
		p.line(1, "# %s", h)
	}
	if it.prog != nil && len(it.prog.Maps) > 0 {
		var ms []string
		for n, m := range it.prog.Maps {
			ms = append(ms, fmt.Sprintf("%s (%s)", n, target.MapTypeName(m.Type)))
		}
		sort.Strings(ms)
		p.line(1, "# State: %s", strings.Join(ms, ", "))
	}
	if len(it.PCVs) > 0 {
		p.line(1, "# PCVs (summed over the operations of a packet):")
		for _, c := range it.PCVs {
			p.line(1, "#   %s - %s: %s", c.Var, c.Map, c.Doc)
		}
	}
	if it.Partial {
		p.line(1, "# PARTIAL: the exploration stopped early; classes are missing")
	}
	if it.Stopped {
		p.line(1, "# STOPPED early (time limit, interrupt or --max-paths): the interface holds at resolutions above %s", trimFloat(it.Floor()))
	}
	switch {
	case it.Coarse && it.Bounded > 0 && it.Reached == 0:
		p.line(1, "# Coarse: %d subtrees whose ways all cost the same were not explored further", it.Bounded)
	case it.Coarse && it.Bounded > 0:
		p.line(1, "# Coarse: %d subtrees at most %s wide were not explored; each lies in one class,", it.Bounded, trimFloat(it.Reached))
		p.line(1, "#   within the cheapest and the dearest way through the program from there")
	case it.Bounded > 0:
		p.line(1, "# Bounded: %d subtrees below %d decisions were not explored; each is a class", it.Bounded, it.MaxDepth)
		p.line(1, "#   whose range runs from the cheapest to the dearest way through the program from there")
	}
	for _, n := range it.Notes {
		p.line(1, "# Note: %s", n)
	}
}

type pyWriter struct {
	w     io.Writer
	leaf  func(*VNode) string // a leaf's line; nil: return its formula
	lines int
	err   error
}

func (p *pyWriter) line(depth int, format string, args ...any) {
	if p.err != nil {
		return
	}
	_, p.err = fmt.Fprintf(p.w, "%s%s\n", strings.Repeat("    ", depth), fmt.Sprintf(format, args...))
	p.lines++
}

// node writes a subtree; elif chains stay flat.
func (p *pyWriter) node(depth int, v *VNode, elif bool) {
	if v.leaf() && p.leaf != nil {
		p.line(depth, "%s", p.leaf(v))
		return
	}
	if v.leaf() {
		p.line(depth, "return %s%s", v.Value, leafNote(v))
		return
	}
	kw := "if"
	if elif {
		kw = "elif"
	}
	p.line(depth, "%s %s:%s", kw, v.Test, sourceNote(v))
	p.node(depth+1, v.Then, false)
	if !v.Else.leaf() {
		p.node(depth, v.Else, true)
		return
	}
	p.line(depth, "else:")
	p.node(depth+1, v.Else, false)
}

func leafNote(v *VNode) string {
	var parts []string
	if v.Hi > v.Lo {
		parts = append(parts, fmt.Sprintf("%s..%s", trimFloat(v.Lo), trimFloat(v.Hi)))
	}
	switch {
	case len(v.Paths) == 1 && v.Bounded == 1:
		parts = append(parts, fmt.Sprintf("path %d not explored further", v.Paths[0]))
	case len(v.Paths) > 1 && v.Bounded > 0:
		parts = append(parts, fmt.Sprintf("%d paths, %d not explored further", len(v.Paths), v.Bounded))
	case len(v.Paths) > 1:
		parts = append(parts, fmt.Sprintf("%d paths", len(v.Paths)))
	case len(v.Paths) == 1:
		parts = append(parts, fmt.Sprintf("path %d", v.Paths[0]))
	}
	if v.Unknown {
		parts = append(parts, "possibly infeasible")
	}
	if len(parts) == 0 {
		return ""
	}
	return "  # " + strings.Join(parts, ", ")
}

func sourceNote(v *VNode) string {
	if v.Readable || v.Source == "" {
		return ""
	}
	return "  # " + v.Source
}

// pythonLines counts the lines of a view's Python form.
func (it *Interface) pythonLines(v *View) int {
	p := &pyWriter{w: io.Discard}
	if v.Root != nil {
		p.node(1, v.Root, false)
	}
	return p.lines
}
