package fit

import (
	"fmt"
	"slices"

	"github.com/dpperf/dpperf/model/spec"
)

// Target is the stage of a specification that a curve is fitted to: an IP
// (throughput, parallelism, queue) and the vertex on it that gets the
// overhead.
type Target struct {
	IP       string
	Vertex   string  // GRAPH.VERTEX; empty when the IP runs several and none was named
	Overhead float64 // the vertex's overhead in the specification (0 without a vertex)
}

// FindTarget finds the stage named by vertex (GRAPH.VERTEX, its IP to
// itself) or, with vertex empty, by ip; exactly one of them is given. The
// IP may run no vertex that reserves a part of it.
func FindTarget(s *spec.Spec, vertex, ip string) (Target, error) {
	t := Target{IP: ip}
	for _, g := range s.Graphs {
		for _, v := range g.Vertices {
			if g.Name+"."+v.Name == vertex {
				t.IP = v.IP
			}
		}
	}
	if t.IP == "" {
		return t, fmt.Errorf("no vertex %q", vertex)
	}
	if s.Hardware.IPByName(t.IP) < 0 {
		return t, fmt.Errorf("no IP %q", t.IP)
	}
	var on []string
	for _, g := range s.Graphs {
		for _, v := range g.Vertices {
			if v.IP != t.IP {
				continue
			}
			if spec.Share(&s.Hardware, v) != 0 {
				return t, fmt.Errorf("vertex %s.%s reserves part of IP %s; fit needs the whole IP", g.Name, v.Name, t.IP)
			}
			on = append(on, g.Name+"."+v.Name)
			if vertex == "" || g.Name+"."+v.Name == vertex {
				t.Overhead = v.Overhead
			}
		}
	}
	switch {
	case vertex != "":
		t.Vertex = vertex
	case len(on) == 1:
		t.Vertex = on[0]
	default:
		t.Overhead = 0
	}
	return t, nil
}

// CheckFree says whether the parameters free can be fitted to t: the
// overhead needs a vertex.
func (t Target) CheckFree(free []string) error {
	if t.Vertex == "" && slices.Contains(free, Overhead) {
		return fmt.Errorf("IP %s runs several vertices: name the one that gets the overhead with --vertex", t.IP)
	}
	return nil
}

// FitTarget fits the stage t of s to the curve pts, starting from the
// specification's values of the parameters o does not free (o.Fixed is
// ignored), and reports it.
func FitTarget(s *spec.Spec, t Target, pts []Point, o Options) (*CurveReport, error) {
	ip := s.Hardware.IPs[s.Hardware.IPByName(t.IP)]
	o.Fixed = Stage{Throughput: ip.Throughput.At(pts[0].Size), Parallelism: float64(ip.Parallelism), Queue: ip.Queue, Overhead: t.Overhead}
	res, err := Fit(pts, o)
	if err != nil {
		return nil, err
	}
	return newCurveReport(t, o, pts, res), nil
}

// WriteInto writes the fitted parameters into the specification d: the
// throughput at the curve's request size, the IP's parallelism and queue,
// the vertex's overhead.
func (r *CurveReport) WriteInto(d *spec.Doc) error {
	for _, p := range r.Fitted {
		var err error
		switch p {
		case Throughput:
			err = d.SetThroughputAt(r.IP, float64(r.Size), float64(r.Throughput))
		case Parallelism:
			err = d.Set(spec.Param(r.IP+".parallelism"), float64(r.Parallelism))
		case Queue:
			err = d.Set(spec.Param(r.IP+".queue"), float64(r.Queue))
		case Overhead:
			err = d.Set(spec.Param(r.Vertex+".overhead"), float64(r.Overhead))
		}
		if err != nil {
			return err
		}
	}
	if _, err := d.Spec(); err != nil {
		return fmt.Errorf("the fitted specification does not validate: %w", err)
	}
	return nil
}
