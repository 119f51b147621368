// Package flow turns a model specification into the network that both the
// analytical model (model/analytic) and the simulator (model/sim) evaluate:
// queueing stations (an IP's shared pool, a partition reserved for one
// vertex, a rate limiter), bandwidth resources (interface, memory,
// IP-to-IP links, ingress and egress lines) and traffic classes, one per
// execution graph and packet size, each a DAG of nodes with the per-node
// quantities of the model's equations.
package flow

import (
	"fmt"
	"math"
	"sort"

	"github.com/dpperf/dpperf/model/spec"
)

// Network is a compiled specification. Bandwidths of absent resources are
// +Inf.
type Network struct {
	Name      string
	Offered   float64 // aggregate offered ingress rate, B/s
	Interface float64
	Memory    float64
	Ingress   float64
	Egress    float64
	Stations  []Station
	Links     []Link
	Classes   []Class
}

// Station is a queue with parallel engines: an IP's pool, a reserved
// partition of an IP, or a rate limiter in front of an IP.
type Station struct {
	Name    string
	IP      string
	Share   float64 // γ: fraction of the IP's throughput
	Engines float64 // D
	Queue   float64 // N per engine (+Inf: unbounded)
	Limiter bool
}

// Link is an IP-to-IP bandwidth shared by the edges between two IPs.
type Link struct {
	Name      string
	Bandwidth float64
}

// Class is one execution graph at one packet size.
type Class struct {
	Graph  string
	Size   float64 // g_in, bytes
	Weight float64 // w: share of the aggregate ingress bytes
	Pkts   float64 // share of the ingress packets
	Nodes  []Node  // 0 is ingress, 1 is egress
	Edges  []Edge
	Topo   []int // nodes in topological order, ingress first
}

// Node is a vertex of a class.
type Node struct {
	Name     string
	Station  int     // -1 for ingress and egress
	Limiter  int     // station of the IP's rate limiter, or -1
	Rate     float64 // throughput P(g) of the whole IP for this class's size, B/s
	LimRate  float64 // rate limit, B/s
	Overhead float64 // O, s
	Delta    float64 // Σδ of the in-edges
	In, Out  []int   // edge indices
}

// Edge is a data movement of a class.
type Edge struct {
	From, To int
	Delta    float64
	Alpha    float64
	Beta     float64
	Split    float64 // δ / Σδ of the out-edges of From: the share of From's output
	Link     int     // -1 if no link joins the two IPs
}

// Ingress and Egress are the node indices of the implicit vertices.
const (
	Ingress = 0
	Egress  = 1
)

// Indeg returns the number of in-edges of node i.
func (c *Class) Indeg(i int) float64 { return float64(len(c.Nodes[i].In)) }

// Compile builds the network of a validated specification.
func Compile(s *spec.Spec) (*Network, error) {
	h := &s.Hardware
	n := &Network{Name: s.Name, Offered: s.Traffic.Ingress, Interface: h.Interface, Memory: h.Memory,
		Ingress: h.Ingress, Egress: h.Egress}
	// Stations: reserved vertices get their own; the rest of each IP is a pool.
	pool := map[string]int{}
	reserved := map[string]float64{}
	vstation := map[[2]string]int{}
	for _, g := range s.Graphs {
		for _, v := range g.Vertices {
			reserved[v.IP] += spec.Share(h, v)
		}
	}
	limiter := map[string]int{}
	for _, ip := range h.IPs {
		if ip.RateLimit > 0 {
			limiter[ip.Name] = len(n.Stations)
			n.Stations = append(n.Stations, Station{Name: "limiter:" + ip.Name, IP: ip.Name, Share: 1, Engines: 1, Queue: ip.LimitQueue, Limiter: true})
		}
	}
	for _, g := range s.Graphs {
		for _, v := range g.Vertices {
			ip := h.IPs[h.IPByName(v.IP)]
			sh := spec.Share(h, v)
			if sh == 0 {
				if _, ok := pool[v.IP]; !ok {
					rest := 1 - reserved[v.IP]
					if rest <= 1e-12 {
						return nil, fmt.Errorf("compile: IP %q is fully reserved but vertex %q of graph %q has no share", v.IP, v.Name, g.Name)
					}
					pool[v.IP] = len(n.Stations)
					n.Stations = append(n.Stations, Station{Name: v.IP, IP: v.IP, Share: rest, Engines: rest * float64(ip.Parallelism), Queue: ip.Queue})
				}
				vstation[[2]string{g.Name, v.Name}] = pool[v.IP]
				continue
			}
			q := ip.Queue
			if v.Queue > 0 {
				q = v.Queue
			}
			eng := sh * float64(ip.Parallelism)
			if v.Parallelism > 0 {
				eng = float64(v.Parallelism)
			}
			vstation[[2]string{g.Name, v.Name}] = len(n.Stations)
			n.Stations = append(n.Stations, Station{Name: v.IP + "/" + g.Name + "." + v.Name, IP: v.IP, Share: sh, Engines: eng, Queue: q})
		}
	}
	linkOf := map[[2]string]int{}
	for _, l := range h.Links {
		linkOf[[2]string{l.A, l.B}] = len(n.Links)
		linkOf[[2]string{l.B, l.A}] = len(n.Links)
		n.Links = append(n.Links, Link{Name: l.A + "-" + l.B, Bandwidth: l.Bandwidth})
	}
	// Classes: graph weight (bytes) split by the byte share of each size.
	wsum := 0.0
	for _, g := range s.Graphs {
		wsum += g.Weight
	}
	if wsum <= 0 {
		return nil, fmt.Errorf("compile: graph weights sum to zero")
	}
	for _, g := range s.Graphs {
		sizes := g.Sizes
		if len(sizes) == 0 {
			sizes = s.Traffic.Sizes
		}
		bytes := 0.0
		for _, sz := range sizes {
			bytes += sz.Share * sz.Size
		}
		for _, sz := range sizes {
			if sz.Share == 0 {
				continue
			}
			c := Class{Graph: g.Name, Size: sz.Size, Weight: g.Weight / wsum * sz.Share * sz.Size / bytes}
			if err := c.build(h, g, vstation, limiter, linkOf); err != nil {
				return nil, err
			}
			n.Classes = append(n.Classes, c)
		}
	}
	pk := 0.0
	for i := range n.Classes {
		n.Classes[i].Pkts = n.Classes[i].Weight / n.Classes[i].Size
		pk += n.Classes[i].Pkts
	}
	for i := range n.Classes {
		n.Classes[i].Pkts /= pk
	}
	return n, nil
}

func (c *Class) build(h *spec.Hardware, g spec.Graph, vstation map[[2]string]int, limiter map[string]int, linkOf map[[2]string]int) error {
	idx := map[string]int{spec.Ingress: Ingress, spec.Egress: Egress}
	phys := []string{spec.Ingress, spec.Egress}
	c.Nodes = []Node{{Name: spec.Ingress, Station: -1, Limiter: -1}, {Name: spec.Egress, Station: -1, Limiter: -1}}
	for _, v := range g.Vertices {
		ip := h.IPs[h.IPByName(v.IP)]
		nd := Node{Name: v.Name, Station: vstation[[2]string{g.Name, v.Name}], Limiter: -1, Overhead: v.Overhead}
		if l, ok := limiter[v.IP]; ok {
			nd.Limiter = l
			nd.LimRate = ip.RateLimit
		}
		nd.Rate = ip.Throughput.At(c.Size)
		if len(v.Throughput.Sizes) > 0 {
			nd.Rate = v.Throughput.At(c.Size)
		}
		if v.Program != nil && v.Service == 0 {
			return fmt.Errorf("compile: vertex %s.%s names a program whose service time was not resolved (model/program)", g.Name, v.Name)
		}
		if v.Service > 0 {
			// D engines, each a request per Service: P = D·g/Service.
			nd.Rate = float64(ip.Parallelism) * c.Size / v.Service
		}
		idx[v.Name] = len(c.Nodes)
		phys = append(phys, v.IP)
		c.Nodes = append(c.Nodes, nd)
	}
	for _, e := range g.Edges {
		ed := Edge{From: idx[e.From], To: idx[e.To], Delta: e.Delta, Alpha: e.Alpha, Beta: e.Beta, Link: -1}
		if l, ok := linkOf[[2]string{phys[ed.From], phys[ed.To]}]; ok {
			ed.Link = l
		}
		c.Nodes[ed.From].Out = append(c.Nodes[ed.From].Out, len(c.Edges))
		c.Nodes[ed.To].In = append(c.Nodes[ed.To].In, len(c.Edges))
		c.Nodes[ed.To].Delta += e.Delta
		c.Edges = append(c.Edges, ed)
	}
	return c.Finish()
}

// Finish derives the out-edge splits and the topological order of a class
// whose nodes and edges are set.
func (c *Class) Finish() error {
	for i := range c.Nodes {
		sum := 0.0
		for _, e := range c.Nodes[i].Out {
			sum += c.Edges[e].Delta
		}
		for _, e := range c.Nodes[i].Out {
			c.Edges[e].Split = c.Edges[e].Delta / sum
		}
	}
	c.Topo = c.topo()
	if len(c.Topo) != len(c.Nodes) {
		return fmt.Errorf("compile: graph %q has a cycle", c.Graph)
	}
	return nil
}

// topo orders the nodes (Kahn's algorithm, ties by index for determinism).
func (c *Class) topo() []int {
	deg := make([]int, len(c.Nodes))
	for _, e := range c.Edges {
		deg[e.To]++
	}
	var ready, order []int
	for i, d := range deg {
		if d == 0 {
			ready = append(ready, i)
		}
	}
	for len(ready) > 0 {
		sort.Ints(ready)
		v := ready[0]
		ready = ready[1:]
		order = append(order, v)
		for _, e := range c.Nodes[v].Out {
			t := c.Edges[e].To
			if deg[t]--; deg[t] == 0 {
				ready = append(ready, t)
			}
		}
	}
	return order
}

// StationRate returns the throughput γ·P(g) of node i's station for the
// class's packet size.
func (n *Network) StationRate(c *Class, i int) float64 {
	nd := c.Nodes[i]
	if nd.Station < 0 {
		return math.Inf(1)
	}
	return nd.Rate * n.Stations[nd.Station].Share
}
