package spec

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/dpperf/dpperf/model/internal/yamlnode"
	"github.com/dpperf/dpperf/units"
	"go.yaml.in/yaml/v3"
)

// Doc is a specification file held as its YAML tree, so that changed
// parameters are written back with the rest of the file (comments, key
// order, layout) as it was.
type Doc struct {
	name string
	doc  yaml.Node
}

// ReadDoc parses and validates a specification for editing.
func ReadDoc(data []byte, name string) (*Doc, error) {
	d := &Doc{name: name}
	if len(data) > MaxSize {
		return nil, &Error{File: name, Msg: "file larger than 16 MiB"}
	}
	if err := yaml.Unmarshal(data, &d.doc); err != nil {
		return nil, &Error{File: name, Msg: "yaml: " + err.Error()}
	}
	if _, err := d.Spec(); err != nil {
		return nil, err
	}
	return d, nil
}

// Spec validates the tree as it is now and returns its specification.
func (d *Doc) Spec() (*Spec, error) {
	if len(d.doc.Content) == 0 {
		return nil, &Error{File: d.name, Msg: "empty file"}
	}
	return Decode(d.doc.Content[0], d.name)
}

// Bytes encodes the tree.
func (d *Doc) Bytes() ([]byte, error) { return yamlnode.Encode(&d.doc) }

func (d *Doc) root() *yaml.Node { return d.doc.Content[0] }

// formatValue writes v as the YAML value of p.
func formatValue(p Param, v float64) string {
	switch {
	case p.Integer() && math.IsInf(v, 1):
		return "unbounded"
	case p.Kind() >= 0:
		return units.Format(v, p.Kind())
	}
	return strconv.FormatFloat(v, 'g', 6, 64)
}

// Set writes value v of parameter p into the tree (see Param for the
// names). Setting a vertex's parallelism removes its partition and the
// other way round; an IP's queue replaces queues and entries; `size`
// replaces every packet-size distribution; an IP's throughput scales its
// whole curve as Spec.Set does.
func (d *Doc) Set(p Param, v float64) error {
	r := d.root()
	val := formatValue(p, v)
	parts := strings.Split(string(p), ".")
	switch {
	case p == "offered":
		return yamlnode.Set(yamlnode.Get(r, "traffic"), "ingress", val)
	case p == "size":
		t := yamlnode.Get(r, "traffic")
		yamlnode.Delete(t, "sizes")
		for _, g := range d.graphs() {
			yamlnode.Delete(g, "size")
			yamlnode.Delete(g, "sizes")
		}
		return yamlnode.Set(t, "size", val)
	case len(parts) == 2:
		if ip := yamlnode.Named(yamlnode.Get(yamlnode.Get(r, "hardware"), "ips"), parts[0]); ip != nil {
			return d.setIP(ip, parts[1], v, val)
		}
		if g := d.graph(parts[0]); g != nil && parts[1] == "weight" {
			return yamlnode.Set(g, "weight", val)
		}
	case len(parts) == 3:
		v := yamlnode.Named(yamlnode.Get(d.graph(parts[0]), "vertices"), parts[1])
		if v == nil {
			break
		}
		switch parts[2] {
		case "parallelism":
			yamlnode.Delete(v, "partition")
		case "partition":
			yamlnode.Delete(v, "parallelism")
		case "queue", "overhead", "placement":
		default:
			return fmt.Errorf("write %s: unknown parameter", p)
		}
		return yamlnode.Set(v, parts[2], val)
	}
	return fmt.Errorf("write %s: unknown parameter", p)
}

func (d *Doc) graphs() []*yaml.Node {
	gs := yamlnode.Get(yamlnode.Get(d.root(), "software"), "graphs")
	if gs == nil {
		return nil
	}
	return gs.Content
}

func (d *Doc) graph(name string) *yaml.Node {
	return yamlnode.Named(yamlnode.Get(yamlnode.Get(d.root(), "software"), "graphs"), name)
}

func (d *Doc) setIP(ip *yaml.Node, field string, v float64, val string) error {
	switch field {
	case "parallelism":
		if yamlnode.Get(ip, "entries") != nil {
			// queues × entries / parallelism would change with the
			// engines: keep N by writing it out.
			s, err := d.Spec()
			if err != nil {
				return err
			}
			n := s.Hardware.IPs[s.Hardware.IPByName(yamlnode.Get(ip, "name").Value)].Queue
			if n != math.Trunc(n) {
				return fmt.Errorf("write %s.parallelism: queues × entries / parallelism is not whole; give queue instead", yamlnode.Get(ip, "name").Value)
			}
			yamlnode.Delete(ip, "queues")
			yamlnode.Delete(ip, "entries")
			if err := yamlnode.Set(ip, "queue", strconv.FormatFloat(n, 'f', -1, 64)); err != nil {
				return err
			}
		}
		return yamlnode.Set(ip, "parallelism", val)
	case "queue":
		yamlnode.Delete(ip, "queues")
		yamlnode.Delete(ip, "entries")
		return yamlnode.Set(ip, "queue", val)
	case "throughput":
		t := yamlnode.Get(ip, "throughput")
		if t == nil || t.Kind == yaml.ScalarNode {
			return yamlnode.Set(ip, "throughput", val)
		}
		s, err := d.Spec()
		if err != nil {
			return err
		}
		c := s.Hardware.IPs[s.Hardware.IPByName(yamlnode.Get(ip, "name").Value)].Throughput
		f := v / c.Rates[len(c.Rates)-1]
		for i, pt := range t.Content {
			if err := yamlnode.Set(pt, "rate", units.Format(c.Rates[i]*f, units.Rate)); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("write %s.%s: unknown parameter", yamlnode.Get(ip, "name").Value, field)
}

// SetThroughputAt sets the throughput of the named IP at one request size:
// a single rate is replaced; in a table the point at that size is replaced
// or a new point inserted in order.
func (d *Doc) SetThroughputAt(ipName string, size, rate float64) error {
	ip := yamlnode.Named(yamlnode.Get(yamlnode.Get(d.root(), "hardware"), "ips"), ipName)
	if ip == nil {
		return fmt.Errorf("write %s.throughput: unknown IP", ipName)
	}
	t := yamlnode.Get(ip, "throughput")
	if t == nil || t.Kind != yaml.SequenceNode {
		return yamlnode.Set(ip, "throughput", units.Format(rate, units.Rate))
	}
	s, err := d.Spec()
	if err != nil {
		return err
	}
	c := s.Hardware.IPs[s.Hardware.IPByName(ipName)].Throughput
	i := sort.SearchFloat64s(c.Sizes, size)
	if i < len(c.Sizes) && math.Abs(c.Sizes[i]-size) < 1e-9*size {
		return yamlnode.Set(t.Content[i], "rate", units.Format(rate, units.Rate))
	}
	pt := &yaml.Node{Kind: yaml.MappingNode, Style: yaml.FlowStyle}
	yamlnode.Set(pt, "size", units.Format(size, units.Size))
	yamlnode.Set(pt, "rate", units.Format(rate, units.Rate))
	t.Content = append(t.Content[:i], append([]*yaml.Node{pt}, t.Content[i:]...)...)
	return nil
}
