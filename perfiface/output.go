package perfiface

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// JSON is the machine-readable form of an interface; json.md documents it.
type JSON struct {
	Program    string      `json:"program"`
	Metric     string      `json:"metric"`
	Unit       string      `json:"unit"`
	Target     string      `json:"target,omitempty"`
	Packets    string      `json:"packets"` // "any" or "well-formed"
	Resolution float64     `json:"resolution"`
	Chosen     bool        `json:"chosen,omitempty"`
	Coarse     bool        `json:"coarse,omitempty"`
	Reached    float64     `json:"reached,omitempty"`
	Stopped    bool        `json:"stopped,omitempty"`
	Partial    bool        `json:"partial,omitempty"`
	MaxDepth   int         `json:"max_depth,omitempty"`
	Bounded    int         `json:"bounded,omitempty"`
	PCVs       []PCV       `json:"pcvs"`
	Notes      []string    `json:"notes"`
	Thresholds []Threshold `json:"thresholds,omitempty"`
	Paths      []PathInfo  `json:"paths"`
	Tree       *VNode      `json:"tree"`
	Explored   *VNode      `json:"explored,omitempty"`
}

// WriteJSON writes the interface at a view's resolution, with every path,
// and the thresholds when asked (they cost one view each).
func (it *Interface) WriteJSON(w io.Writer, v *View, thresholds bool) error {
	j := JSON{Program: it.Program, Metric: it.Metric, Unit: it.Unit, Target: it.Target, Resolution: v.Resolution,
		Partial: it.Partial, MaxDepth: it.MaxDepth, Bounded: it.Bounded, PCVs: it.PCVs, Notes: it.Notes, Paths: it.Paths, Tree: v.Root}
	if j.PCVs == nil {
		j.PCVs = []PCV{}
	}
	if j.Notes == nil {
		j.Notes = []string{}
	}
	if j.Paths == nil {
		j.Paths = []PathInfo{}
	}
	j.Chosen, j.Coarse, j.Reached, j.Stopped = v.Chosen, it.Coarse, it.Reached, it.Stopped
	j.Packets = "any"
	if it.WellFormed {
		j.Packets = "well-formed"
	}
	if it.Coarse {
		j.Explored = it.View(1e-9).Root // every decision made, open subtrees as classes
	}
	if thresholds {
		j.Thresholds = it.Thresholds()
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(j)
}

// Dot writes a view's decision tree in Graphviz form: tests as boxes with
// yes/no edges, classes as ellipses with their formula.
func (it *Interface) Dot(w io.Writer, v *View) error {
	var b strings.Builder
	b.WriteString("digraph interface {\n  node [fontname=\"monospace\", fontsize=10];\n")
	fmt.Fprintf(&b, "  label=%s; labelloc=t;\n", strconv.Quote(it.Program+" — "+it.metricTitle()))
	n := 0
	var walk func(x *VNode) int
	walk = func(x *VNode) int {
		id := n
		n++
		if x.leaf() {
			label := x.Value.String()
			if note := strings.TrimPrefix(leafNote(x), "  # "); note != "" {
				label += "\n" + note
			}
			fmt.Fprintf(&b, "  n%d [shape=ellipse, label=%s];\n", id, strconv.Quote(label))
			return id
		}
		fmt.Fprintf(&b, "  n%d [shape=box, label=%s];\n", id, strconv.Quote(x.Test))
		t, e := walk(x.Then), walk(x.Else)
		fmt.Fprintf(&b, "  n%d -> n%d [label=\"yes\"];\n  n%d -> n%d [label=\"no\", style=dashed];\n", id, t, id, e)
		return id
	}
	if v.Root != nil {
		walk(v.Root)
	}
	b.WriteString("}\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteThresholds lists the resolution thresholds with the interface's
// size (classes and lines of Python) above each, beside what the source
// document's elimination gives on the same paths (DocumentMerge: its
// classes and the worst distance of a path from its class; then with the
// constraints no pair of paths measures eliminated too), then what the
// exploration left out.
func (it *Interface) WriteThresholds(w io.Writer) error {
	switch {
	case it.Coarse && it.Bounded > 0:
		fmt.Fprintf(w, "%s: %d paths explored to the end and %d subtrees at most %s wide not explored, metric %s\n\n",
			it.Program, len(it.Paths)-it.Bounded, it.Bounded, trimFloat(it.Reached), it.Metric)
	case it.Bounded > 0:
		fmt.Fprintf(w, "%s: %d feasible paths and %d subtrees below %d decisions not explored, metric %s\n\n",
			it.Program, len(it.Paths)-it.Bounded, it.Bounded, it.MaxDepth, it.Metric)
	default:
		fmt.Fprintf(w, "%s: %d feasible paths, metric %s\n\n", it.Program, len(it.Paths), it.Metric)
	}
	// The document's elimination needs every path's cost: exact
	// interfaces only.
	doc := it.Bounded == 0 && !it.Partial
	if doc {
		fmt.Fprintf(w, "%12s  %8s  %6s  %-16s  %s\n", "resolution", "classes", "lines", "document", "unpaired too")
	} else {
		fmt.Fprintf(w, "%12s  %8s  %6s\n", "resolution", "classes", "lines")
	}
	for _, t := range it.Thresholds() {
		if !doc {
			fmt.Fprintf(w, "%12s  %8d  %6d\n", "> "+trimFloat(t.Value), t.Classes, t.Lines)
			continue
		}
		dm := it.DocumentMerge(t.Value + 1e-9) // just above the threshold, as the row
		fmt.Fprintf(w, "%12s  %8d  %6d  %-16s  %s\n", "> "+trimFloat(t.Value), t.Classes, t.Lines,
			fmt.Sprintf("%d ±%s", dm.Classes, trimFloat(dm.WorstError)), fmt.Sprintf("%d ±%s", dm.Loose.Classes, trimFloat(dm.Loose.WorstError)))
	}
	if doc {
		fmt.Fprintln(w, "\ndocument: the source document's elimination on these paths (a constraint goes when the paths that differ")
		fmt.Fprintln(w, "only there differ by less than the resolution), its classes and the farthest a path lies from its class's")
		fmt.Fprintln(w, "value; unpaired too: constraints no such pair measures are eliminated as well")
	}
	if it.Coarse && it.Bounded > 0 {
		fmt.Fprintf(w, "\nthresholds at or below %s lie in subtrees not explored: --resolution R --thresholds refines down to R,\n--resolution 0 --thresholds explores every feasible path\n", trimFloat(it.Reached))
	}
	if it.Stopped {
		fmt.Fprintln(w, "\nSTOPPED early (time limit, interrupt or --max-paths): the table holds down to the resolution reached")
	}
	if it.Partial {
		fmt.Fprintln(w, "\nPARTIAL: the exploration stopped early; classes are missing (--max-depth bounds the tree instead)")
	}
	if len(it.Notes) > 0 {
		fmt.Fprintln(w, "\nnotes:")
		for _, n := range it.Notes {
			fmt.Fprintf(w, "  - %s\n", n)
		}
	}
	return nil
}
