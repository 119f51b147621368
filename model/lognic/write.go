package lognic

import (
	"math"
	"strconv"
	"strings"

	"github.com/dpperf/dpperf/model/internal/yamlnode"
	"go.yaml.in/yaml/v3"
)

// YAML writes f in the format, so that Parse reads it back as f: absent
// and null values (NaN) as null or left out, numbers in their shortest
// exact form. Comments and the order of the hardware edges are not kept
// (Doc keeps them when a file is edited).
func (f *File) YAML() ([]byte, error) {
	hw := mapping()
	if !math.IsNaN(f.Interface) {
		add(hw, "interface", num(f.Interface))
	}
	if !math.IsNaN(f.Memory) {
		add(hw, "memory", num(f.Memory))
	}
	phys := mapping()
	for _, p := range f.Phys {
		add(phys, p, null())
	}
	add(hw, "nodes", phys)
	if len(f.Links) > 0 {
		edges := mapping()
		for _, l := range f.Links {
			// Parse cuts a key at its first '-': the name before it has none.
			a, b := l.A, l.B
			if strings.Contains(a, "-") {
				a, b = b, a
			}
			add(edges, a+"-"+b, num(l.BW))
		}
		add(hw, "edges", edges)
	}
	sw := &yaml.Node{Kind: yaml.SequenceNode}
	for _, u := range f.Cases {
		sw.Content = append(sw.Content, u.node())
	}
	root := mapping()
	add(root, "hardware", hw)
	add(root, "software", sw)
	return yamlnode.Encode(&yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{root}})
}

func (u UseCase) node() *yaml.Node {
	n := mapping()
	add(n, "bandwidth-in", num(u.BandwidthIn))
	add(n, "granularity-in", num(u.Granularity))
	nodes := mapping()
	for _, nd := range u.Nodes {
		if nd.Name == "ingress" || nd.Name == "egress" {
			continue
		}
		a := mapping()
		add(a, "phy_node", str(nd.Phy))
		add(a, "partition", num(nd.Partition))
		add(a, "performance", num(nd.Performance))
		for _, q := range []struct {
			key string
			v   float64
		}{{"Q_num", nd.QNum}, {"Q_len", nd.QLen}} {
			if !math.IsNaN(q.v) {
				add(a, q.key, num(q.v))
			}
		}
		add(a, "overhead", num(nd.Overhead))
		add(nodes, nd.Name, a)
	}
	if len(nodes.Content) == 0 {
		// Parse wants at least one key; it skips ingress.
		add(nodes, "ingress", null())
	}
	add(n, "nodes", nodes)
	edges := mapping()
	for _, e := range u.Edges {
		a := mapping()
		add(a, "total", num(e.Total))
		add(a, "INTF", num(e.INTF))
		add(a, "DRAM", num(e.DRAM))
		add(edges, u.Nodes[e.From].Name+"-"+u.Nodes[e.To].Name, a)
	}
	add(n, "edges", edges)
	return n
}

func mapping() *yaml.Node { return &yaml.Node{Kind: yaml.MappingNode} }

func add(m *yaml.Node, key string, v *yaml.Node) { m.Content = append(m.Content, str(key), v) }

func str(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }

func null() *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"} }

// num writes v, or null for NaN.
func num(v float64) *yaml.Node {
	if math.IsNaN(v) {
		return null()
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Value: strconv.FormatFloat(v, 'g', -1, 64)}
}
