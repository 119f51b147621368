// Package lognic reads the YAML execution-graph files of the public LogNIC
// implementation (format in docs/model.md) and evaluates them either with
// that implementation's own semantics (Compat) or, after conversion to a
// flow network, with the document's equations (Network + model/analytic).
//
// Bandwidths in these files are in GiB/s (2^30 B/s), granularities in
// bytes and overheads in seconds. The JSON form of Compat's result
// (CompatReport) is documented in json.md.
package lognic

import (
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// GiB is the unit of every bandwidth in the format.
const GiB = 1 << 30

// File is a parsed model file.
type File struct {
	Name      string
	Interface float64 // GiB/s; NaN if absent
	Memory    float64
	Phys      []string
	Links     []Link
	Cases     []UseCase
}

// Link is an undirected IP-IP bandwidth between two physical nodes.
type Link struct {
	A, B string // sorted
	BW   float64
}

// UseCase is one execution graph of the software list.
type UseCase struct {
	BandwidthIn float64
	Granularity float64 // bytes
	Nodes       []Node  // YAML order, then ingress and egress
	Edges       []Edge
}

// Node is a virtual node.
type Node struct {
	Name        string
	Phy         string
	Partition   float64
	Performance float64 // NaN: pass-through
	QNum, QLen  float64 // NaN if absent
	Overhead    float64
}

// Edge is a directed edge of a use case.
type Edge struct {
	From, To          int
	Total, INTF, DRAM float64
}

// Load reads a model file.
func Load(path string) (*File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("open lognic model: %w", err)
	}
	return Parse(b, path)
}

// Detect says whether a YAML document looks like this format: a top-level
// software list.
func Detect(b []byte) bool {
	var top map[string]any
	if yaml.Unmarshal(b, &top) != nil {
		return false
	}
	_, isList := top["software"].([]any)
	return isList
}

type perr struct {
	file string
	line int
	msg  string
}

func (e *perr) Error() string { return fmt.Sprintf("%s:%d: %s", e.file, e.line, e.msg) }

// Parse reads the format from b; name is used in errors.
func Parse(b []byte, name string) (f *File, err error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("%s: yaml: %v", name, err)
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s: want a mapping with hardware and software", name)
	}
	p := &parser{name: name}
	f = &File{Name: name, Interface: math.NaN(), Memory: math.NaN()}
	root := p.mapping(doc.Content[0], "")
	hw := p.mapping(root["hardware"], "hardware")
	if v, ok := hw["interface"]; ok {
		f.Interface = p.num(v, "hardware.interface")
	}
	if v, ok := hw["memory"]; ok {
		f.Memory = p.num(v, "hardware.memory")
	}
	physSet := map[string]bool{"ingress": true, "egress": true}
	for _, k := range p.keys(hw["nodes"], "hardware.nodes") {
		f.Phys = append(f.Phys, k.Value)
		physSet[k.Value] = true
	}
	if hn := hw["edges"]; hn != nil && hn.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(hn.Content); i += 2 {
			k := hn.Content[i]
			a, b, ok := strings.Cut(k.Value, "-")
			if !ok || !physSet[a] || !physSet[b] {
				p.fail(k, "hardware.edges: %q does not join two hardware nodes", k.Value)
				break
			}
			if b < a {
				a, b = b, a
			}
			bw := p.num(hn.Content[i+1], "hardware.edges."+k.Value)
			replaced := false
			for j := range f.Links {
				if f.Links[j].A == a && f.Links[j].B == b {
					f.Links[j].BW, replaced = bw, true
				}
			}
			if !replaced {
				f.Links = append(f.Links, Link{A: a, B: b, BW: bw})
			}
		}
	}
	sw := root["software"]
	if sw == nil || sw.Kind != yaml.SequenceNode {
		p.fail(doc.Content[0], "software: want a list of use cases")
	} else {
		for i, un := range sw.Content {
			f.Cases = append(f.Cases, p.useCase(un, fmt.Sprintf("software[%d]", i), physSet))
		}
	}
	if p.err != nil {
		return nil, p.err
	}
	if len(f.Cases) == 0 {
		return nil, fmt.Errorf("%s: software: no use cases", name)
	}
	return f, nil
}

type parser struct {
	name string
	err  error
}

func (p *parser) fail(n *yaml.Node, format string, a ...any) {
	if p.err == nil {
		line := 0
		if n != nil {
			line = n.Line
		}
		p.err = &perr{file: p.name, line: line, msg: fmt.Sprintf(format, a...)}
	}
}

func (p *parser) mapping(n *yaml.Node, path string) map[string]*yaml.Node {
	m := map[string]*yaml.Node{}
	if n == nil {
		p.fail(nil, "%s: missing", path)
		return m
	}
	if n.Kind != yaml.MappingNode {
		p.fail(n, "%s: want a mapping", path)
		return m
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		m[n.Content[i].Value] = n.Content[i+1]
	}
	return m
}

func (p *parser) keys(n *yaml.Node, path string) []*yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode || len(n.Content) == 0 {
		p.fail(n, "%s: want a non-empty mapping", path)
		return nil
	}
	var out []*yaml.Node
	for i := 0; i < len(n.Content); i += 2 {
		out = append(out, n.Content[i])
	}
	return out
}

// num reads a number; numbers written as strings (YAML 1.1 "1e-6") are
// accepted too. A null gives NaN.
func (p *parser) num(n *yaml.Node, path string) float64 {
	if n == nil {
		p.fail(nil, "%s: missing", path)
		return math.NaN()
	}
	if n.Tag == "!!null" {
		return math.NaN()
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(n.Value), 64)
	if n.Kind != yaml.ScalarNode || err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		p.fail(n, "%s: want a number, got %q", path, n.Value)
		return math.NaN()
	}
	return v
}

func (p *parser) useCase(n *yaml.Node, path string, phys map[string]bool) UseCase {
	m := p.mapping(n, path)
	u := UseCase{BandwidthIn: p.num(m["bandwidth-in"], path+".bandwidth-in"), Granularity: p.num(m["granularity-in"], path+".granularity-in")}
	idx := map[string]int{}
	nodes := m["nodes"]
	for _, k := range p.keys(nodes, path+".nodes") {
		if k.Value == "ingress" || k.Value == "egress" {
			continue
		}
		if strings.Contains(k.Value, "-") {
			p.fail(k, "%s.nodes: name %q contains '-'", path, k.Value)
		}
	}
	if p.err != nil {
		return u
	}
	for i := 0; i < len(nodes.Content); i += 2 {
		k, v := nodes.Content[i], nodes.Content[i+1]
		if k.Value == "ingress" || k.Value == "egress" {
			continue
		}
		q := path + ".nodes." + k.Value
		a := p.mapping(v, q)
		nd := Node{Name: k.Value, QNum: math.NaN(), QLen: math.NaN()}
		if a["phy_node"] == nil {
			p.fail(v, "%s.phy_node: missing", q)
			return u
		}
		nd.Phy = a["phy_node"].Value
		if !phys[nd.Phy] {
			p.fail(a["phy_node"], "%s.phy_node: %q is not a hardware node", q, nd.Phy)
		}
		nd.Partition = p.num(a["partition"], q+".partition")
		nd.Performance = math.NaN()
		if a["performance"] != nil {
			nd.Performance = p.num(a["performance"], q+".performance")
		} else {
			p.fail(v, "%s.performance: missing (null for a pass-through node)", q)
		}
		for key, dst := range map[string]*float64{"Q_num": &nd.QNum, "Q_len": &nd.QLen, "overhead": &nd.Overhead} {
			if a[key] != nil {
				*dst = p.num(a[key], q+"."+key)
			}
		}
		idx[nd.Name] = len(u.Nodes)
		u.Nodes = append(u.Nodes, nd)
	}
	for _, name := range []string{"ingress", "egress"} {
		idx[name] = len(u.Nodes)
		u.Nodes = append(u.Nodes, Node{Name: name, Phy: name, Partition: 1, Performance: math.NaN()})
	}
	en := m["edges"]
	for _, k := range p.keys(en, path+".edges") {
		_ = k
	}
	if p.err != nil {
		return u
	}
	for i := 0; i < len(en.Content); i += 2 {
		k, v := en.Content[i], en.Content[i+1]
		a, b, ok := strings.Cut(k.Value, "-")
		ia, oka := idx[a]
		ib, okb := idx[b]
		if !ok || !oka || !okb {
			p.fail(k, "%s.edges: %q does not join two nodes of this use case", path, k.Value)
			return u
		}
		q := path + ".edges." + k.Value
		at := p.mapping(v, q)
		u.Edges = append(u.Edges, Edge{From: ia, To: ib, Total: p.num(at["total"], q+".total"),
			INTF: p.num(at["INTF"], q+".INTF"), DRAM: p.num(at["DRAM"], q+".DRAM")})
	}
	return u
}

// weights returns w_u = B_u/ΣB (1 for all if the sum is 0).
func (f *File) weights() []float64 {
	sum := 0.0
	for _, u := range f.Cases {
		sum += u.BandwidthIn
	}
	w := make([]float64, len(f.Cases))
	for i, u := range f.Cases {
		w[i] = 1
		if sum != 0 {
			w[i] = u.BandwidthIn / sum
		}
	}
	return w
}

// normPartitions returns γ̂ for every node: partition over the sum of the
// partitions on the same physical node across all use cases.
func (f *File) normPartitions() [][]float64 {
	sum := map[string]float64{}
	for _, u := range f.Cases {
		for _, n := range u.Nodes {
			sum[n.Phy] += n.Partition
		}
	}
	out := make([][]float64, len(f.Cases))
	for i, u := range f.Cases {
		out[i] = make([]float64, len(u.Nodes))
		for j, n := range u.Nodes {
			out[i][j] = n.Partition
			if s := sum[n.Phy]; s != 0 {
				out[i][j] = n.Partition / s
			}
		}
	}
	return out
}

// sortedCandidates orders candidates ascending, keeping ties in append
// order as the implementation's stable sort does.
func sortedCandidates(c []Candidate) []Candidate {
	out := append([]Candidate(nil), c...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Value < out[j].Value })
	return out
}
