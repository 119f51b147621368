package perfiface

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/dpperf/dpperf/replay/dist"
	"github.com/dpperf/dpperf/replay/rootcause"
)

// pName names a percentile: "p50", "p99.9".
func pName(p float64) string { return "p" + strings.TrimSuffix(fmt.Sprintf("%g", p), ".0") }

// Summary is the header line of a deployment: the trace and what became
// of its frames.
func (d *Deployment) Summary() string {
	return fmt.Sprintf("Trace: %s, %d frames: %d priced, %d did not run, %d off the explored paths",
		d.Trace, d.Frames, len(d.Packets), d.NotRun, d.OffPath)
}

// Python writes the percentile interface: the view's tree without the
// classes no packet reached, each class returning the requested
// percentiles of its packets' costs, then the p0..p100 table of all
// packets as CSV (p,value) in a string constant.
func (d *Deployment) Python(w io.Writer) error {
	bw := bufio.NewWriter(w)
	p := &pyWriter{w: bw, leaf: d.leafLine}
	want := make([]string, len(d.Want))
	for i, q := range d.Want {
		want[i] = pName(q)
	}
	d.It.pyHeader(p, d.View, []string{d.Summary(),
		fmt.Sprintf("Deployment-specific: each class returns the %s (nearest rank) of the costs of the trace's packets that reached it; classes no packet reached are left out",
			strings.Join(want, ", "))})
	p.node(1, d.Root, false)
	p.line(0, "")
	p.line(0, "")
	p.line(0, "# Percentiles p0..p100 (nearest rank) of the cost of all %d priced packets.", len(d.Packets))
	p.line(0, `PERCENTILES_CSV = """\`)
	p.line(0, "p,value")
	for i, v := range d.All {
		p.line(0, "%d,%s", i, trimFloat(v))
	}
	p.line(0, `"""`)
	if p.err != nil {
		return p.err
	}
	return bw.Flush()
}

func (d *Deployment) leafLine(v *VNode) string {
	c := d.ClassOf(v)
	parts := make([]string, len(d.Want))
	for i, q := range d.Want {
		parts[i] = fmt.Sprintf("'%s': %s", pName(q), trimFloat(c.Percentiles[i]))
	}
	note := fmt.Sprintf("class %d: %d packets (%.1f%%), %s", c.ID, c.Packets,
		100*float64(c.Packets)/float64(len(d.Packets)), v.Value)
	if len(v.Paths) == 1 {
		note += fmt.Sprintf(", path %d", v.Paths[0])
	} else {
		note += fmt.Sprintf(", %d paths", len(v.Paths))
	}
	return fmt.Sprintf("return {%s}  # %s", strings.Join(parts, ", "), note)
}

// DeployJSON is the machine-readable deployment interface (deploy.md).
type DeployJSON struct {
	Program     string        `json:"program"`
	Metric      string        `json:"metric"`
	Unit        string        `json:"unit"`
	Target      string        `json:"target,omitempty"`
	Resolution  float64       `json:"resolution"`
	Trace       string        `json:"trace"`
	Frames      int           `json:"frames"`
	Priced      int           `json:"priced"`
	NotRun      int           `json:"not_run"`
	OffPath     int           `json:"off_path"`
	Percentiles []float64     `json:"percentiles"`
	All         []float64     `json:"all"` // p0..p100
	Classes     []DeployClass `json:"classes"`
	Tree        *DeployNode   `json:"tree"`
}

// DeployClass is a class in DeployJSON.
type DeployClass struct {
	*Class
	Value Formula `json:"value"`
	Paths []int   `json:"paths"`
}

// DeployNode is a node of the pruned tree in DeployJSON: a test or a
// class.
type DeployNode struct {
	Test  string      `json:"test,omitempty"`
	Then  *DeployNode `json:"then,omitempty"`
	Else  *DeployNode `json:"else,omitempty"`
	Class *int        `json:"class,omitempty"`
}

// WriteJSON writes the deployment interface as JSON; only classes some
// packet reached are listed.
func (d *Deployment) WriteJSON(w io.Writer) error {
	j := DeployJSON{Program: d.It.Program, Metric: d.It.Metric, Unit: d.It.Unit, Target: d.It.Target,
		Resolution: d.View.Resolution, Trace: d.Trace, Frames: d.Frames, Priced: len(d.Packets),
		NotRun: d.NotRun, OffPath: d.OffPath, Percentiles: d.Want, All: d.All, Classes: []DeployClass{}}
	for _, c := range d.Classes {
		if c.Packets > 0 {
			j.Classes = append(j.Classes, DeployClass{Class: c, Value: *c.Leaf.Value, Paths: c.Leaf.Paths})
		}
	}
	var node func(v *VNode) *DeployNode
	node = func(v *VNode) *DeployNode {
		if v.leaf() {
			id := d.ClassOf(v).ID
			return &DeployNode{Class: &id}
		}
		return &DeployNode{Test: v.Test, Then: node(v.Then), Else: node(v.Else)}
	}
	j.Tree = node(d.Root)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(j)
}

// CDF draws the cost distribution of all packets and of the (at most
// five) classes with the most packets.
func (d *Deployment) CDF() dist.CDF {
	all := make([]float64, len(d.Packets))
	for i, p := range d.Packets {
		all[i] = p.Cost
	}
	c := dist.CDF{Title: fmt.Sprintf("%s on %s", d.Prog().Name, filepath.Base(d.Trace)),
		XLabel: d.It.metricTitle() + " per packet", Series: []dist.Series{{Name: "all", Values: all}}}
	var top []*Class
	for _, cl := range d.Classes {
		if cl.Packets > 0 {
			top = append(top, cl)
		}
	}
	sort.SliceStable(top, func(i, j int) bool { return top[i].Packets > top[j].Packets })
	for _, cl := range top[:min(5, len(top))] {
		c.Series = append(c.Series, dist.Series{Name: fmt.Sprintf("class %d", cl.ID), Values: cl.Costs})
	}
	return c
}

// WriteRootCause prints the ranking of RootCause as a table of Python
// comments: the features that explain the slow packets, best first.
func (d *Deployment) WriteRootCause(w io.Writer, slow rootcause.Slow) error {
	tab, err := d.RootCause(slow)
	if err != nil {
		return fmt.Errorf("root cause: %w", err)
	}
	fmt.Fprintf(w, "\n# Root cause: %d slow packets (cost above %s %s), %d others\n", tab.Slow, trimFloat(tab.Threshold), d.It.Unit, tab.Fast)
	return commented(w, 0, func(tw io.Writer) {
		fmt.Fprintln(tw, "score\tkind\tfeature\texplanation")
		for _, r := range tab.Rows {
			if r.Score > 0 {
				fmt.Fprintf(tw, "%.2f\t%s\t%s\t%s\n", r.Score, r.Kind, shorten(r.Name, 60), r.Explanation)
			}
		}
	})
}

// shorten cuts a long condition for a table column.
func shorten(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// commented writes an aligned table as Python comment lines.
func commented(w io.Writer, flags uint, fill func(tw io.Writer)) error {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 2, 8, 2, ' ', flags)
	fill(tw)
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, line := range strings.SplitAfter(b.String(), "\n") {
		if line != "" {
			if _, err := io.WriteString(w, "#  "+line); err != nil {
				return err
			}
		}
	}
	return nil
}
