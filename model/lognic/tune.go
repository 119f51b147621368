package lognic

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/dpperf/dpperf/model/flow"
	"github.com/dpperf/dpperf/model/internal/yamlnode"
	"github.com/dpperf/dpperf/model/spec"
	"go.yaml.in/yaml/v3"
)

// The parameters of a LogNIC file, for sweeps and the optimizer. Use cases
// are named case0, case1, … in file order:
//
//	offered                   Σ bandwidth-in (scales every use case's)
//	size                      granularity-in of every use case
//	caseK.offered             bandwidth-in of one use case
//	caseK.NODE.parallelism    Q_num
//	caseK.NODE.queue          Q_len
//	caseK.NODE.partition      partition
//	caseK.NODE.overhead       overhead
//	caseK.NODE.throughput     performance
//
// Rates are in B/s here (the file holds GiB/s).

var _ flow.Tunable = (*File)(nil)

// Compile implements flow.Tunable (the document's equations).
func (f *File) Compile() (*flow.Network, error) { return f.Network() }

// Clone implements flow.Tunable.
func (f *File) Clone() flow.Tunable {
	c := *f
	c.Phys = append([]string(nil), f.Phys...)
	c.Links = append([]Link(nil), f.Links...)
	c.Cases = make([]UseCase, len(f.Cases))
	for i, u := range f.Cases {
		u.Nodes = append([]Node(nil), u.Nodes...)
		u.Edges = append([]Edge(nil), u.Edges...)
		c.Cases[i] = u
	}
	return &c
}

// Get implements flow.Tunable.
func (f *File) Get(p spec.Param) (float64, error) {
	var out float64
	err := f.apply(p, func(x *float64, scale float64) { out = *x * scale })
	return out, err
}

// Set implements flow.Tunable.
func (f *File) Set(p spec.Param, v float64) error {
	if v < 0 || math.IsNaN(v) {
		return fmt.Errorf("set %s: negative value %v", p, v)
	}
	if p.Integer() && v != math.Trunc(v) && !math.IsInf(v, 1) {
		return fmt.Errorf("set %s: %v is not a whole number", p, v)
	}
	if p == "offered" {
		sum := 0.0
		for _, u := range f.Cases {
			sum += u.BandwidthIn
		}
		for i := range f.Cases {
			if sum > 0 {
				f.Cases[i].BandwidthIn *= v / GiB / sum
			} else {
				f.Cases[i].BandwidthIn = v / GiB / float64(len(f.Cases))
			}
		}
		return nil
	}
	return f.apply(p, func(x *float64, scale float64) { *x = v / scale })
}

// apply calls fn with the field behind p and the factor from the file's
// unit to the parameter's.
func (f *File) apply(p spec.Param, fn func(x *float64, scale float64)) error {
	parts := strings.Split(string(p), ".")
	switch {
	case p == "offered":
		sum := 0.0
		for _, u := range f.Cases {
			sum += u.BandwidthIn
		}
		fn(&sum, GiB)
		return nil
	case p == "size":
		g := f.Cases[0].Granularity
		fn(&g, 1)
		for i := range f.Cases {
			f.Cases[i].Granularity = g
		}
		return nil
	}
	k, ok := caseIndex(parts[0])
	if !ok || k >= len(f.Cases) {
		return unknown(p)
	}
	u := &f.Cases[k]
	if len(parts) == 2 && parts[1] == "offered" {
		fn(&u.BandwidthIn, GiB)
		return nil
	}
	if len(parts) != 3 {
		return unknown(p)
	}
	for i := range u.Nodes {
		n := &u.Nodes[i]
		if n.Name != parts[1] || n.Name == "ingress" || n.Name == "egress" {
			continue
		}
		switch parts[2] {
		case "parallelism":
			if math.IsNaN(n.QNum) {
				n.QNum = 1
			}
			fn(&n.QNum, 1)
		case "queue":
			if math.IsNaN(n.QLen) {
				n.QLen = math.Inf(1)
			}
			fn(&n.QLen, 1)
		case "partition":
			fn(&n.Partition, 1)
		case "overhead":
			fn(&n.Overhead, 1)
		case "throughput":
			if math.IsNaN(n.Performance) {
				return fmt.Errorf("parameter %s: node %s is a pass-through (performance null)", p, n.Name)
			}
			fn(&n.Performance, GiB)
		default:
			return unknown(p)
		}
		return nil
	}
	return unknown(p)
}

func caseIndex(s string) (int, bool) {
	num, ok := strings.CutPrefix(s, "case")
	if !ok {
		return 0, false
	}
	k, err := strconv.Atoi(num)
	return k, err == nil && k >= 0
}

func unknown(p spec.Param) error {
	return fmt.Errorf("unknown parameter %q of a LogNIC file (offered, size, caseK.offered, caseK.NODE.parallelism|queue|partition|overhead|throughput; see docs/model.md)", p)
}

// Doc is a LogNIC file held as its YAML tree, for writing changed
// parameters back with the rest of the file as it was.
type Doc struct {
	file *File
	doc  yaml.Node
}

// ReadDoc parses a LogNIC file for editing.
func ReadDoc(data []byte, name string) (*Doc, error) {
	f, err := Parse(data, name)
	if err != nil {
		return nil, err
	}
	d := &Doc{file: f}
	if err := yaml.Unmarshal(data, &d.doc); err != nil {
		return nil, err
	}
	return d, nil
}

// Set writes value v of p into the tree, in the file's units.
func (d *Doc) Set(p spec.Param, v float64) error {
	if err := d.file.Set(p, v); err != nil {
		return err
	}
	num := func(x float64) string { return strconv.FormatFloat(x, 'g', 10, 64) }
	sw := yamlnode.Get(d.doc.Content[0], "software")
	parts := strings.Split(string(p), ".")
	for k, u := range d.file.Cases {
		cn := sw.Content[k]
		switch {
		case p == "offered" || len(parts) == 2 && parts[0] == fmt.Sprintf("case%d", k):
			if err := yamlnode.Set(cn, "bandwidth-in", num(u.BandwidthIn)); err != nil {
				return err
			}
		case p == "size":
			if err := yamlnode.Set(cn, "granularity-in", num(u.Granularity)); err != nil {
				return err
			}
		case len(parts) == 3 && parts[0] == fmt.Sprintf("case%d", k):
			nd := yamlnode.Get(yamlnode.Get(cn, "nodes"), parts[1])
			key, val := "", 0.0
			for _, n := range u.Nodes {
				if n.Name != parts[1] {
					continue
				}
				switch parts[2] {
				case "parallelism":
					key, val = "Q_num", n.QNum
				case "queue":
					key, val = "Q_len", n.QLen
				case "partition":
					key, val = "partition", n.Partition
				case "overhead":
					key, val = "overhead", n.Overhead
				case "throughput":
					key, val = "performance", n.Performance
				}
			}
			if math.IsInf(val, 1) {
				yamlnode.Delete(nd, key)
				continue
			}
			if err := yamlnode.Set(nd, key, num(val)); err != nil {
				return err
			}
		}
	}
	return nil
}

// Bytes encodes the tree.
func (d *Doc) Bytes() ([]byte, error) { return yamlnode.Encode(&d.doc) }
