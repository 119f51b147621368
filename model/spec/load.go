package spec

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/dpperf/dpperf/units"
	"go.yaml.in/yaml/v3"
)

// MaxSize is the largest specification file Read accepts.
const MaxSize = 16 << 20

// Load reads and validates the specification in the named file.
func Load(path string) (*Spec, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open spec: %w", err)
	}
	defer f.Close()
	return Read(f, path)
}

// Read parses and validates a specification; name is used in errors.
func Read(r io.Reader, name string) (*Spec, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxSize+1))
	if err != nil {
		return nil, fmt.Errorf("read spec: %w", err)
	}
	if len(data) > MaxSize {
		return nil, &Error{File: name, Msg: "file larger than 16 MiB"}
	}
	root, err := parseYAML(data, name)
	if err != nil {
		return nil, err
	}
	return Decode(root, name)
}

// parseYAML parses one YAML document into its root node.
func parseYAML(data []byte, name string) (*yaml.Node, error) {
	var doc yaml.Node
	dc := yaml.NewDecoder(bytes.NewReader(data))
	if err := dc.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &Error{File: name, Msg: "empty file"}
		}
		return nil, &Error{File: name, Msg: "yaml: " + err.Error()}
	}
	if len(doc.Content) == 0 {
		return nil, &Error{File: name, Msg: "empty file"}
	}
	return doc.Content[0], nil
}

// Decode builds a Spec from a parsed YAML tree.
func Decode(root *yaml.Node, name string) (*Spec, error) {
	d := &dec{file: name}
	s := &Spec{}
	top := d.fields(root, "", "name", "hardware", "software", "traffic")
	s.Name = d.str(top["name"], "name", false)
	if top["hardware"] == nil {
		d.fail(root, "hardware", "missing")
	}
	d.hardware(top["hardware"], &s.Hardware)
	if top["traffic"] == nil {
		d.fail(root, "traffic", "missing")
	}
	d.traffic(top["traffic"], &s.Traffic)
	if top["software"] == nil {
		d.fail(root, "software", "missing")
	}
	sw := d.fields(top["software"], "software", "graphs")
	gs := d.seq(sw["graphs"], "software.graphs")
	if d.err == nil && len(gs) == 0 {
		d.fail(top["software"], "software.graphs", "at least one graph is needed")
	}
	for i, g := range gs {
		s.Graphs = append(s.Graphs, d.graph(g, fmt.Sprintf("software.graphs[%d]", i), &s.Hardware))
	}
	if d.err != nil {
		return nil, d.err
	}
	d.checkShares(s)
	d.checkRates(s)
	if d.err != nil {
		return nil, d.err
	}
	return s, nil
}

func (d *dec) hardware(n *yaml.Node, h *Hardware) {
	f := d.fields(n, "hardware", "ingress", "egress", "interface", "memory", "ips", "links")
	h.Ingress = d.port(f["ingress"], "hardware.ingress")
	h.Egress = d.port(f["egress"], "hardware.egress")
	inf := math.Inf(1)
	h.Interface = d.quantity(f["interface"], "hardware.interface", units.Rate, inf)
	h.Memory = d.quantity(f["memory"], "hardware.memory", units.Rate, inf)
	ips := d.seq(f["ips"], "hardware.ips")
	if d.err == nil && len(ips) == 0 {
		d.fail(n, "hardware.ips", "at least one IP is needed")
	}
	for i, in := range ips {
		p := fmt.Sprintf("hardware.ips[%d]", i)
		ip := d.ip(in, p)
		if ip.Name == Ingress || ip.Name == Egress {
			d.fail(in, p+".name", "%q is reserved", ip.Name)
		}
		if h.IPByName(ip.Name) >= 0 {
			d.fail(in, p+".name", "IP %q declared twice", ip.Name)
		}
		h.IPs = append(h.IPs, ip)
	}
	for i, ln := range d.seq(f["links"], "hardware.links") {
		p := fmt.Sprintf("hardware.links[%d]", i)
		lf := d.fields(ln, p, "between", "bandwidth")
		ends := d.seq(lf["between"], p+".between")
		if d.err == nil && len(ends) != 2 {
			d.fail(ln, p+".between", "want two IP names")
		}
		if d.err != nil {
			return
		}
		l := Link{A: d.str(ends[0], p+".between", true), B: d.str(ends[1], p+".between", true)}
		for _, e := range []string{l.A, l.B} {
			if e != Ingress && e != Egress && h.IPByName(e) < 0 {
				d.fail(ln, p+".between", "unknown IP %q", e)
			}
		}
		if lf["bandwidth"] == nil {
			d.fail(ln, p+".bandwidth", "missing")
		}
		l.Bandwidth = d.quantity(lf["bandwidth"], p+".bandwidth", units.Rate, inf)
		for _, o := range h.Links {
			if o.A == l.A && o.B == l.B || o.A == l.B && o.B == l.A {
				d.fail(ln, p, "link %s-%s declared twice", l.A, l.B)
			}
		}
		h.Links = append(h.Links, l)
	}
}

func (d *dec) port(n *yaml.Node, path string) float64 {
	if n == nil {
		return math.Inf(1)
	}
	f := d.fields(n, path, "ports", "rate")
	ports := d.integer(f["ports"], path+".ports", 1, 1, false)
	if f["rate"] == nil {
		d.fail(n, path+".rate", "missing")
	}
	return ports * d.quantity(f["rate"], path+".rate", units.Rate, math.Inf(1))
}

func (d *dec) ip(n *yaml.Node, p string) IP {
	f := d.fields(n, p, "name", "kind", "throughput", "parallelism", "queue", "queues", "entries", "rate-limit", "limiter-queue")
	ip := IP{Line: n.Line}
	ip.Name = d.str(f["name"], p+".name", true)
	ip.Kind = d.str(f["kind"], p+".kind", false)
	switch ip.Kind {
	case "", "core", "accelerator", "dma", "ssd", "switch", "other":
	default:
		d.fail(f["kind"], p+".kind", "unknown kind %q (core, accelerator, dma, ssd, switch, other)", ip.Kind)
	}
	// An IP without a throughput needs one from each of its vertices
	// (their own throughput, or a program): checkRates.
	ip.Throughput = d.curve(f["throughput"], p+".throughput")
	ip.Parallelism = int(d.integer(f["parallelism"], p+".parallelism", 1, 1, false))
	ip.Queue = math.Inf(1)
	if f["queue"] != nil && (f["queues"] != nil || f["entries"] != nil) {
		d.fail(f["queue"], p+".queue", "give either queue or queues+entries")
	}
	ip.Queue = d.integer(f["queue"], p+".queue", ip.Queue, 1, true)
	if f["entries"] != nil {
		m := d.integer(f["queues"], p+".queues", float64(ip.Parallelism), 1, false)
		k := d.integer(f["entries"], p+".entries", 1, 1, true)
		ip.Queue = m * k / float64(ip.Parallelism)
		if ip.Queue < 1 {
			d.fail(f["entries"], p+".entries", "fewer queue entries than engines")
		}
	} else if f["queues"] != nil {
		d.fail(f["queues"], p+".queues", "needs entries")
	}
	ip.RateLimit = d.quantity(f["rate-limit"], p+".rate-limit", units.Rate, 0)
	ip.LimitQueue = d.integer(f["limiter-queue"], p+".limiter-queue", math.Inf(1), 1, true)
	if f["limiter-queue"] != nil && f["rate-limit"] == nil {
		d.fail(f["limiter-queue"], p+".limiter-queue", "needs rate-limit")
	}
	return ip
}

// curve reads a throughput: one rate, or a list of {size, rate} points.
func (d *dec) curve(n *yaml.Node, p string) Curve {
	if n == nil || d.err != nil {
		return Curve{}
	}
	if n.Kind == yaml.ScalarNode {
		return Const(d.quantity(n, p, units.Rate, 1))
	}
	var c Curve
	for i, pt := range d.seq(n, p) {
		q := fmt.Sprintf("%s[%d]", p, i)
		f := d.fields(pt, q, "size", "rate")
		if f["size"] == nil || f["rate"] == nil {
			d.fail(pt, q, "want size and rate")
			return c
		}
		s := d.quantity(f["size"], q+".size", units.Size, 1)
		if len(c.Sizes) > 0 && s <= c.Sizes[len(c.Sizes)-1] {
			d.fail(f["size"], q+".size", "sizes must ascend")
		}
		c.Sizes = append(c.Sizes, s)
		c.Rates = append(c.Rates, d.quantity(f["rate"], q+".rate", units.Rate, 1))
	}
	if d.err == nil && len(c.Sizes) == 0 {
		d.fail(n, p, "empty throughput table")
	}
	return c
}

func (d *dec) traffic(n *yaml.Node, t *Traffic) {
	f := d.fields(n, "traffic", "ingress", "sizes", "size")
	if f["ingress"] == nil {
		d.fail(n, "traffic.ingress", "missing")
	}
	t.Ingress = d.quantity(f["ingress"], "traffic.ingress", units.Rate, 1)
	t.Sizes = d.sizes(f, "traffic")
	if d.err == nil && len(t.Sizes) == 0 {
		d.fail(n, "traffic.sizes", "missing (give size or sizes)")
	}
}

func (d *dec) sizes(f map[string]*yaml.Node, p string) []SizeShare {
	if f["size"] != nil && f["sizes"] != nil {
		d.fail(f["size"], p+".size", "give either size or sizes")
	}
	if f["size"] != nil {
		return []SizeShare{{Size: d.quantity(f["size"], p+".size", units.Size, 1), Share: 1}}
	}
	var out []SizeShare
	total := 0.0
	for i, sn := range d.seq(f["sizes"], p+".sizes") {
		q := fmt.Sprintf("%s.sizes[%d]", p, i)
		sf := d.fields(sn, q, "size", "share")
		if sf["size"] == nil || sf["share"] == nil {
			d.fail(sn, q, "want size and share")
			return nil
		}
		ss := SizeShare{Size: d.quantity(sf["size"], q+".size", units.Size, 1), Share: d.number(sf["share"], q+".share", 0, 0, math.MaxFloat64)}
		total += ss.Share
		out = append(out, ss)
	}
	if d.err == nil && len(out) > 0 && total <= 0 {
		d.fail(f["sizes"], p+".sizes", "shares sum to zero")
	}
	for i := range out {
		out[i].Share /= total
	}
	return out
}

// checkRates requires a throughput for every vertex: its own, its
// program's (set when the program is resolved), or its IP's.
func (d *dec) checkRates(s *Spec) {
	for _, g := range s.Graphs {
		for _, v := range g.Vertices {
			if len(v.Throughput.Sizes) > 0 || v.Program != nil {
				continue
			}
			for _, pl := range v.Placements {
				if len(pl.Throughput.Sizes) == 0 && len(s.Hardware.IPs[s.Hardware.IPByName(pl.IP)].Throughput.Sizes) == 0 {
					d.fail(&yaml.Node{Line: v.Line}, "hardware.ips.throughput", "missing for IP %q (vertex %s.%s gives neither throughput nor program)", pl.IP, g.Name, v.Name)
					return
				}
			}
			if i := s.Hardware.IPByName(v.IP); len(v.Placements) == 0 && len(s.Hardware.IPs[i].Throughput.Sizes) == 0 {
				d.fail(&yaml.Node{Line: s.Hardware.IPs[i].Line}, fmt.Sprintf("hardware.ips[%d].throughput", i), "missing (vertex %s.%s gives neither throughput nor program)", g.Name, v.Name)
				return
			}
		}
	}
}
