package lognic

import (
	"fmt"
	"math"

	"github.com/dpperf/dpperf/model/flow"
)

// Network converts f into a flow network so that model/analytic evaluates
// it with the document's equations: each virtual node with a performance
// is a station with share γ̂, Q_num engines and queue Q_len; hardware
// edges are links; use cases are classes weighted by bandwidth-in.
func (f *File) Network() (*flow.Network, error) {
	inf := math.Inf(1)
	gib := func(v float64) float64 {
		if math.IsNaN(v) {
			return inf
		}
		return v * GiB
	}
	n := &flow.Network{Name: f.Name, Interface: gib(f.Interface), Memory: gib(f.Memory), Ingress: inf, Egress: inf}
	linkOf := map[[2]string]int{}
	for i, l := range f.Links {
		linkOf[[2]string{l.A, l.B}] = i
		n.Links = append(n.Links, flow.Link{Name: l.A + "-" + l.B, Bandwidth: l.BW * GiB})
	}
	w := f.weights()
	g := f.normPartitions()
	wsum := 0.0
	for _, x := range w {
		wsum += x
	}
	pk := 0.0
	for ui, u := range f.Cases {
		n.Offered += u.BandwidthIn * GiB
		c := flow.Class{Graph: fmt.Sprintf("case%d", ui), Size: u.Granularity, Weight: w[ui] / wsum}
		idx := make([]int, len(u.Nodes))
		c.Nodes = []flow.Node{{Name: "ingress", Station: -1, Limiter: -1}, {Name: "egress", Station: -1, Limiter: -1}}
		for ni, nd := range u.Nodes {
			switch nd.Name {
			case "ingress":
				idx[ni] = flow.Ingress
				continue
			case "egress":
				idx[ni] = flow.Egress
				continue
			}
			idx[ni] = len(c.Nodes)
			fn := flow.Node{Name: nd.Name, Station: -1, Limiter: -1, Overhead: nd.Overhead}
			if !math.IsNaN(nd.Performance) {
				if g[ui][ni] <= 0 {
					return nil, fmt.Errorf("lognic: node %s has partition 0", nd.Name)
				}
				eng, q := nd.QNum, nd.QLen
				if math.IsNaN(eng) {
					eng = 1
				}
				if math.IsNaN(q) {
					q = inf
				}
				fn.Station = len(n.Stations)
				fn.Rate = nd.Performance * GiB
				n.Stations = append(n.Stations, flow.Station{Name: fmt.Sprintf("%s(%d-%s)", nd.Phy, ui, nd.Name), IP: nd.Phy, Share: g[ui][ni], Engines: eng, Queue: q})
			}
			c.Nodes = append(c.Nodes, fn)
		}
		for _, e := range u.Edges {
			ed := flow.Edge{From: idx[e.From], To: idx[e.To], Delta: e.Total, Alpha: e.INTF, Beta: e.DRAM, Link: -1}
			a, b := u.Nodes[e.From].Phy, u.Nodes[e.To].Phy
			if b < a {
				a, b = b, a
			}
			if l, ok := linkOf[[2]string{a, b}]; ok {
				ed.Link = l
			}
			c.Nodes[ed.From].Out = append(c.Nodes[ed.From].Out, len(c.Edges))
			c.Nodes[ed.To].In = append(c.Nodes[ed.To].In, len(c.Edges))
			c.Nodes[ed.To].Delta += e.Total
			c.Edges = append(c.Edges, ed)
		}
		if err := c.Finish(); err != nil {
			return nil, err
		}
		c.Pkts = c.Weight / c.Size
		pk += c.Pkts
		n.Classes = append(n.Classes, c)
	}
	for i := range n.Classes {
		n.Classes[i].Pkts /= pk
	}
	return n, nil
}
