package spec

import (
	"fmt"
	"math"
	"sort"
)

// Spec is a validated model specification.
type Spec struct {
	Name     string
	Hardware Hardware
	Graphs   []Graph
	Traffic  Traffic
}

// Hardware describes the device. Absent bandwidths are +Inf (no limit).
type Hardware struct {
	Ingress   float64 // total ingress line rate, B/s
	Egress    float64 // total egress line rate, B/s
	Interface float64 // BW_INTF, B/s
	Memory    float64 // BW_MEM, B/s
	IPs       []IP
	Links     []Link
}

// IP is one hardware block: cores, an accelerator, a DMA engine, an SSD.
type IP struct {
	Name        string
	Kind        string
	Throughput  Curve   // peak throughput P of the whole IP as a function of request size
	Parallelism int     // number of engines D
	Queue       float64 // capacity N of each engine's queue (including the request in service); +Inf if unbounded
	RateLimit   float64 // B/s of a rate limiter in front of the IP (0: none)
	LimitQueue  float64 // capacity of the limiter's queue (+Inf if unbounded)
	Line        int     // line of the IP in the file
}

// Link is the bandwidth between two IPs (or ingress/egress), shared by
// both directions.
type Link struct {
	A, B      string
	Bandwidth float64
}

// Curve is a throughput as a function of request size, given by points
// and interpolated linearly between them (constant beyond the ends).
type Curve struct {
	Sizes []float64 // ascending
	Rates []float64
}

// Const returns a curve with the same rate for every size.
func Const(rate float64) Curve { return Curve{Sizes: []float64{0}, Rates: []float64{rate}} }

// At returns the rate for requests of size s bytes.
func (c Curve) At(s float64) float64 {
	n := len(c.Sizes)
	if n == 0 {
		return math.Inf(1)
	}
	if n == 1 || s <= c.Sizes[0] {
		return c.Rates[0]
	}
	if s >= c.Sizes[n-1] {
		return c.Rates[n-1]
	}
	i := sort.SearchFloat64s(c.Sizes, s)
	x0, x1 := c.Sizes[i-1], c.Sizes[i]
	y0, y1 := c.Rates[i-1], c.Rates[i]
	return y0 + (y1-y0)*(s-x0)/(x1-x0)
}

// Scale returns the curve multiplied by f.
func (c Curve) Scale(f float64) Curve {
	r := make([]float64, len(c.Rates))
	for i, v := range c.Rates {
		r[i] = v * f
	}
	return Curve{Sizes: c.Sizes, Rates: r}
}

// Graph is one execution graph: a DAG from ingress to egress whose
// vertices run on IPs.
type Graph struct {
	Name     string
	Weight   float64 // share of the ingress bytes (normalised over graphs)
	Sizes    []SizeShare
	Vertices []Vertex
	Edges    []Edge
}

// Vertex is a stage of a graph placed on an IP.
type Vertex struct {
	Name        string
	IP          string
	Partition   float64 // γ, share of the IP reserved for this vertex (0: shared pool)
	Parallelism int     // engines reserved for this vertex (0: not set)
	Queue       float64 // queue capacity per engine for a reserved vertex (0: the IP's)
	Overhead    float64 // O, seconds
	Throughput  Curve   // P of the IP for this vertex's work (empty: the IP's)
	Placements  []Placement
	Placement   int      // index into Placements of the current placement
	Program     *Program // the XDP program whose bound gives the service time (nil: none)
	Service     float64  // time one engine spends per request, s (0: from Throughput); set from Program
	Line        int
}

// Program names the packet program a vertex runs, whose worst case
// (`dpperf bound --json`) or deployment mean gives the vertex its service
// time: either a bound result file, or an object file and a target the
// bound is computed for. Paths are relative to the specification file.
type Program struct {
	Bound   string // dpperf bound --json result
	Object  string // BPF ELF object
	Name    string // program of the object, as `dpperf programs` lists it (empty: its only one)
	Target  string // target name or file (default nfp-agilio-cx)
	Engines int    // engines the bound's rate spans (0: the IP's parallelism)
	Line    int
}

// Placement is one IP a vertex can run on, with its throughput and
// overhead there; GRAPH.VERTEX.placement picks one.
type Placement struct {
	IP         string
	Throughput Curve // empty: the IP's
	Overhead   float64
}

// Place moves the vertex to placement i.
func (v *Vertex) Place(i int) error {
	if i < 0 || i >= len(v.Placements) {
		return fmt.Errorf("vertex %s: placement %d of %d", v.Name, i, len(v.Placements))
	}
	p := v.Placements[i]
	v.Placement, v.IP, v.Throughput, v.Overhead = i, p.IP, p.Throughput, p.Overhead
	return nil
}

// Edge is a data movement between two vertices; "ingress" and "egress"
// are the implicit end points.
type Edge struct {
	From, To string
	Delta    float64 // δ: bytes on this edge per ingress byte
	Alpha    float64 // α: bytes over the interface per ingress byte
	Beta     float64 // β: bytes over memory per ingress byte
	Line     int
}

// SizeShare is one entry of a packet-size distribution: Share is the
// fraction of packets (normalised) of the given size.
type SizeShare struct {
	Size  float64
	Share float64
}

// Traffic is the offered load.
type Traffic struct {
	Ingress float64 // aggregate offered rate, B/s
	Sizes   []SizeShare
}

// IPByName returns the index of the named IP or -1.
func (h *Hardware) IPByName(name string) int {
	for i := range h.IPs {
		if h.IPs[i].Name == name {
			return i
		}
	}
	return -1
}

// Names of the implicit vertices of every graph.
const (
	Ingress = "ingress"
	Egress  = "egress"
)
