package spec

import (
	"fmt"
	"math"
	"strings"

	"github.com/dpperf/dpperf/units"
)

// Param names a parameter of a specification that sweeps and the
// optimizer vary:
//
//	offered                      traffic.ingress (a rate)
//	size                         one packet size for all traffic
//	GRAPH.weight                 a graph's share of the ingress bytes
//	GRAPH.VERTEX.parallelism     engines reserved for a vertex (whole number)
//	GRAPH.VERTEX.partition       share of its IP reserved for a vertex
//	GRAPH.VERTEX.queue           a reserved vertex's queue capacity (credits)
//	GRAPH.VERTEX.overhead        a vertex's transfer overhead (a duration)
//	GRAPH.VERTEX.placement       index into a vertex's placements (whole number)
//	IP.parallelism / IP.queue    an IP's engines / queue capacity
//	IP.throughput                scales an IP's whole throughput curve to this rate at its largest size
type Param string

// Kind returns the unit kind of values of p, or -1 for plain numbers.
func (p Param) Kind() units.Kind {
	switch {
	case p == "offered" || strings.HasSuffix(string(p), ".offered") || strings.HasSuffix(string(p), ".throughput"):
		return units.Rate
	case p == "size":
		return units.Size
	case strings.HasSuffix(string(p), ".overhead"):
		return units.Time
	}
	return -1
}

// Integer says whether p takes whole numbers.
func (p Param) Integer() bool {
	return strings.HasSuffix(string(p), ".parallelism") || strings.HasSuffix(string(p), ".queue") || strings.HasSuffix(string(p), ".placement")
}

// ParseValue reads a value of p: a quantity with a unit, or a number,
// within the range p admits (Check).
func (p Param) ParseValue(s string) (float64, error) {
	var v float64
	if k := p.Kind(); k >= 0 {
		var err error
		if v, err = units.Parse(s, k); err != nil {
			return 0, err
		}
	} else if _, err := fmt.Sscanf(strings.TrimSpace(s), "%g", &v); err != nil {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	if err := p.Check(v); err != nil {
		return 0, fmt.Errorf("%q: %w", s, err)
	}
	return v, nil
}

// Check says whether v is a value p can take: finite, and positive for
// sizes, rates, shares and queues (a packet of 0 bytes or a rate of 0 has
// no throughput or latency to compute), at least 1 for engines, at most 1
// for a partition, at least 0 for overheads, weights and placements, and
// whole where p counts.
func (p Param) Check(v float64) error {
	name := string(p)
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		name = name[i+1:]
	}
	var ok bool
	var want string
	switch name {
	case "size", "offered", "throughput":
		ok, want = v > 0, "above 0"
	case "queue":
		ok, want = v >= 1, "at least 1"
	case "parallelism":
		ok, want = v >= 1, "at least 1"
	case "partition":
		ok, want = v > 0 && v <= 1, "in (0, 1]"
	default: // overhead, weight, placement
		ok, want = v >= 0, "at least 0"
	}
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return fmt.Errorf("%s must be a finite number", p)
	case !ok:
		return fmt.Errorf("%s must be %s", p, want)
	case p.Integer() && v != math.Trunc(v):
		return fmt.Errorf("%s must be a whole number", p)
	}
	return nil
}

// Get returns the current value of p.
func (s *Spec) Get(p Param) (float64, error) {
	var out float64
	err := s.apply(p, func(x *float64) { out = *x }, func(x *int) { out = float64(*x) })
	return out, err
}

// Set changes p to v and revalidates what the change can break.
func (s *Spec) Set(p Param, v float64) error {
	if v < 0 || math.IsNaN(v) {
		return fmt.Errorf("set %s: negative value %v", p, v)
	}
	if p.Integer() && v != math.Trunc(v) {
		return fmt.Errorf("set %s: %v is not a whole number", p, v)
	}
	err := s.apply(p, func(x *float64) { *x = v }, func(x *int) { *x = int(v) })
	if err != nil {
		return err
	}
	return s.checkReserved()
}

func (s *Spec) apply(p Param, f func(*float64), fi func(*int)) error {
	parts := strings.Split(string(p), ".")
	switch {
	case p == "offered":
		f(&s.Traffic.Ingress)
		return nil
	case p == "size":
		var v float64
		if len(s.Traffic.Sizes) > 0 {
			v = s.Traffic.Sizes[0].Size
		}
		f(&v)
		s.Traffic.Sizes = []SizeShare{{Size: v, Share: 1}}
		for i := range s.Graphs {
			s.Graphs[i].Sizes = nil
		}
		return nil
	case len(parts) == 2:
		if i := s.Hardware.IPByName(parts[0]); i >= 0 {
			ip := &s.Hardware.IPs[i]
			switch parts[1] {
			case "parallelism":
				fi(&ip.Parallelism)
				return nil
			case "queue":
				f(&ip.Queue)
				return nil
			case "throughput":
				peak := ip.Throughput.Rates[len(ip.Throughput.Rates)-1]
				v := peak
				f(&v)
				ip.Throughput = ip.Throughput.Scale(v / peak)
				return nil
			}
		}
		for i := range s.Graphs {
			if s.Graphs[i].Name == parts[0] && parts[1] == "weight" {
				f(&s.Graphs[i].Weight)
				return nil
			}
		}
	case len(parts) == 3:
		for gi := range s.Graphs {
			if s.Graphs[gi].Name != parts[0] {
				continue
			}
			for vi := range s.Graphs[gi].Vertices {
				v := &s.Graphs[gi].Vertices[vi]
				if v.Name != parts[1] {
					continue
				}
				switch parts[2] {
				case "parallelism":
					v.Partition = 0
					fi(&v.Parallelism)
					return nil
				case "partition":
					v.Parallelism = 0
					f(&v.Partition)
					return nil
				case "queue":
					f(&v.Queue)
					return nil
				case "overhead":
					f(&v.Overhead)
					return nil
				case "placement":
					if len(v.Placements) == 0 {
						return fmt.Errorf("parameter %s: the vertex has no placements", p)
					}
					i := v.Placement
					fi(&i)
					return v.Place(i)
				}
			}
		}
	}
	return fmt.Errorf("unknown parameter %q (see docs/model.md: offered, size, GRAPH.weight, GRAPH.VERTEX.parallelism|partition|queue|overhead|placement, IP.parallelism|queue|throughput)", p)
}

// checkReserved verifies the reserved shares after a change.
func (s *Spec) checkReserved() error {
	total := map[string]float64{}
	for _, g := range s.Graphs {
		for _, v := range g.Vertices {
			ip := s.Hardware.IPByName(v.IP)
			if v.Parallelism > s.Hardware.IPs[ip].Parallelism {
				return fmt.Errorf("vertex %s.%s: %d engines, but IP %q has %d", g.Name, v.Name, v.Parallelism, v.IP, s.Hardware.IPs[ip].Parallelism)
			}
			total[v.IP] += Share(&s.Hardware, v)
		}
	}
	for ip, t := range total {
		if t > 1+1e-9 {
			return fmt.Errorf("reserved shares of IP %q sum to %.4g, above 1", ip, t)
		}
	}
	return nil
}

// Clone returns a deep copy of s.
func (s *Spec) Clone() *Spec {
	c := *s
	c.Hardware.IPs = append([]IP(nil), s.Hardware.IPs...)
	c.Hardware.Links = append([]Link(nil), s.Hardware.Links...)
	c.Traffic.Sizes = append([]SizeShare(nil), s.Traffic.Sizes...)
	c.Graphs = make([]Graph, len(s.Graphs))
	for i, g := range s.Graphs {
		g.Vertices = append([]Vertex(nil), g.Vertices...)
		g.Edges = append([]Edge(nil), g.Edges...)
		g.Sizes = append([]SizeShare(nil), g.Sizes...)
		if len(g.Sizes) == 0 {
			g.Sizes = nil
		}
		c.Graphs[i] = g
	}
	return &c
}
