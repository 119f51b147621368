package spec

import (
	"fmt"
	"math"
	"strings"

	"github.com/dpperf/dpperf/units"
	"go.yaml.in/yaml/v3"
)

func (d *dec) graph(n *yaml.Node, p string, h *Hardware) Graph {
	f := d.fields(n, p, "name", "weight", "size", "sizes", "vertices", "edges")
	g := Graph{}
	g.Name = d.str(f["name"], p+".name", true)
	g.Weight = d.number(f["weight"], p+".weight", 1, 0, math.MaxFloat64)
	if f["size"] != nil || f["sizes"] != nil {
		g.Sizes = d.sizes(f, p)
	}
	names := map[string]bool{Ingress: true, Egress: true}
	for i, vn := range d.seq(f["vertices"], p+".vertices") {
		q := fmt.Sprintf("%s.vertices[%d]", p, i)
		vf := d.fields(vn, q, "name", "ip", "partition", "parallelism", "queue", "overhead", "throughput", "placements", "placement", "program")
		v := Vertex{Line: vn.Line}
		v.Name = d.str(vf["name"], q+".name", true)
		if names[v.Name] {
			d.fail(vn, q+".name", "vertex %q declared twice (ingress and egress are implicit)", v.Name)
		}
		names[v.Name] = true
		if vf["placements"] != nil {
			d.placements(vf, q, h, &v)
		} else {
			if vf["placement"] != nil {
				d.fail(vf["placement"], q+".placement", "needs placements")
			}
			v.IP = d.str(vf["ip"], q+".ip", true)
			if d.err == nil && h.IPByName(v.IP) < 0 {
				d.fail(vf["ip"], q+".ip", "unknown IP %q", v.IP)
			}
			if vf["throughput"] != nil {
				v.Throughput = d.curve(vf["throughput"], q+".throughput")
			}
			v.Overhead = d.quantity(vf["overhead"], q+".overhead", units.Time, 0)
		}
		if vf["program"] != nil {
			v.Program = d.program(vf, q)
		}
		ipi := h.IPByName(v.IP)
		v.Partition = d.number(vf["partition"], q+".partition", 0, 0, 1)
		if vf["partition"] != nil && v.Partition == 0 {
			d.fail(vf["partition"], q+".partition", "must be above 0")
		}
		v.Parallelism = int(d.integer(vf["parallelism"], q+".parallelism", 0, 1, false))
		if vf["partition"] != nil && vf["parallelism"] != nil {
			d.fail(vf["parallelism"], q+".parallelism", "give either partition or parallelism")
		}
		if d.err == nil && v.Parallelism > 0 && v.Parallelism > h.IPs[ipi].Parallelism {
			d.fail(vf["parallelism"], q+".parallelism", "%d engines, but IP %q has %d", v.Parallelism, v.IP, h.IPs[ipi].Parallelism)
		}
		v.Queue = d.integer(vf["queue"], q+".queue", 0, 1, true)
		if vf["queue"] != nil && vf["partition"] == nil && vf["parallelism"] == nil {
			d.fail(vf["queue"], q+".queue", "a vertex's own queue needs partition or parallelism (else it shares the IP's queue)")
		}
		g.Vertices = append(g.Vertices, v)
	}
	if d.err == nil && len(g.Vertices) == 0 {
		d.fail(n, p+".vertices", "at least one vertex is needed")
	}
	seen := map[[2]string]bool{}
	for i, en := range d.seq(f["edges"], p+".edges") {
		q := fmt.Sprintf("%s.edges[%d]", p, i)
		ef := d.fields(en, q, "from", "to", "delta", "alpha", "beta")
		e := Edge{Line: en.Line}
		e.From = d.str(ef["from"], q+".from", true)
		e.To = d.str(ef["to"], q+".to", true)
		for _, x := range []struct{ name, field string }{{e.From, "from"}, {e.To, "to"}} {
			if d.err == nil && !names[x.name] {
				d.fail(ef[x.field], q+"."+x.field, "unknown vertex %q", x.name)
			}
		}
		if e.From == Egress || e.To == Ingress || e.From == e.To {
			d.fail(en, q, "edge %s -> %s is not allowed", e.From, e.To)
		}
		if seen[[2]string{e.From, e.To}] {
			d.fail(en, q, "edge %s -> %s given twice", e.From, e.To)
		}
		seen[[2]string{e.From, e.To}] = true
		e.Delta = d.number(ef["delta"], q+".delta", 1, 0, math.MaxFloat64)
		if ef["delta"] != nil && e.Delta == 0 {
			d.fail(ef["delta"], q+".delta", "must be above 0 (drop the edge instead)")
		}
		e.Alpha = d.number(ef["alpha"], q+".alpha", 0, 0, math.MaxFloat64)
		e.Beta = d.number(ef["beta"], q+".beta", 0, 0, math.MaxFloat64)
		g.Edges = append(g.Edges, e)
	}
	if d.err == nil {
		d.checkDAG(n, p, &g)
	}
	return g
}

// checkDAG requires the graph to be acyclic, every vertex to lie on a path
// from ingress to egress, and ingress to have an out-edge.
func (d *dec) checkDAG(n *yaml.Node, p string, g *Graph) {
	out := map[string][]string{}
	in := map[string][]string{}
	for _, e := range g.Edges {
		out[e.From] = append(out[e.From], e.To)
		in[e.To] = append(in[e.To], e.From)
	}
	reach := func(start string, next map[string][]string) map[string]bool {
		seen := map[string]bool{start: true}
		stack := []string{start}
		for len(stack) > 0 {
			v := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for _, w := range next[v] {
				if !seen[w] {
					seen[w] = true
					stack = append(stack, w)
				}
			}
		}
		return seen
	}
	fwd, back := reach(Ingress, out), reach(Egress, in)
	if !fwd[Egress] {
		d.fail(n, p+".edges", "no path from ingress to egress")
		return
	}
	for _, v := range g.Vertices {
		if !fwd[v.Name] {
			d.fail(n, p+".edges", "vertex %q is not reachable from ingress", v.Name)
			return
		}
		if !back[v.Name] {
			d.fail(n, p+".edges", "vertex %q has no path to egress", v.Name)
			return
		}
	}
	// Cycle check by colouring.
	state := map[string]int{}
	var path []string
	var visit func(v string) bool
	visit = func(v string) bool {
		state[v] = 1
		path = append(path, v)
		for _, w := range out[v] {
			if state[w] == 1 {
				path = append(path, w)
				return false
			}
			if state[w] == 0 && !visit(w) {
				return false
			}
		}
		state[v] = 2
		path = path[:len(path)-1]
		return true
	}
	if !visit(Ingress) {
		d.fail(n, p+".edges", "cycle %s", strings.Join(path, " -> "))
	}
}

// checkShares validates partitions per IP: explicit shares (partition, or
// parallelism/engines) may not exceed the whole IP.
func (d *dec) checkShares(s *Spec) {
	total := map[string]float64{}
	for _, g := range s.Graphs {
		for _, v := range g.Vertices {
			total[v.IP] += Share(&s.Hardware, v)
		}
	}
	for gi, g := range s.Graphs {
		for vi, v := range g.Vertices {
			if total[v.IP] > 1+1e-9 {
				d.fail(&yaml.Node{Line: v.Line}, fmt.Sprintf("software.graphs[%d].vertices[%d]", gi, vi),
					"reserved shares of IP %q sum to %.4g, above 1", v.IP, total[v.IP])
				return
			}
		}
	}
}

// Share returns the fraction of its IP a vertex reserves (0 for the pool).
func Share(h *Hardware, v Vertex) float64 {
	if v.Partition > 0 {
		return v.Partition
	}
	if v.Parallelism > 0 {
		return float64(v.Parallelism) / float64(h.IPs[h.IPByName(v.IP)].Parallelism)
	}
	return 0
}

// placements reads the IPs a vertex can run on and places it on the one
// its placement field picks (default the first).
func (d *dec) placements(vf map[string]*yaml.Node, q string, h *Hardware, v *Vertex) {
	for _, f := range []string{"ip", "throughput", "overhead"} {
		if vf[f] != nil {
			d.fail(vf[f], q+"."+f, "give %s in each of placements", f)
		}
	}
	for i, pn := range d.seq(vf["placements"], q+".placements") {
		pq := fmt.Sprintf("%s.placements[%d]", q, i)
		pf := d.fields(pn, pq, "ip", "throughput", "overhead")
		p := Placement{IP: d.str(pf["ip"], pq+".ip", true)}
		if d.err == nil && h.IPByName(p.IP) < 0 {
			d.fail(pf["ip"], pq+".ip", "unknown IP %q", p.IP)
		}
		if pf["throughput"] != nil {
			p.Throughput = d.curve(pf["throughput"], pq+".throughput")
		}
		p.Overhead = d.quantity(pf["overhead"], pq+".overhead", units.Time, 0)
		v.Placements = append(v.Placements, p)
	}
	if d.err == nil && len(v.Placements) == 0 {
		d.fail(vf["placements"], q+".placements", "at least one placement is needed")
	}
	i := int(d.integer(vf["placement"], q+".placement", 0, 0, false))
	if d.err == nil && v.Place(i) != nil {
		d.fail(vf["placement"], q+".placement", "%d is not an index of placements (0 to %d)", i, len(v.Placements)-1)
	}
}

// program reads the packet program of a vertex: {bound: FILE} or
// {object: FILE, name: PROGRAM, target: NAME}, optionally engines.
func (d *dec) program(vf map[string]*yaml.Node, q string) *Program {
	n := vf["program"]
	p := q + ".program"
	for _, f := range []string{"throughput", "placements"} {
		if vf[f] != nil {
			d.fail(vf[f], q+"."+f, "give either program or %s", f)
		}
	}
	f := d.fields(n, p, "bound", "object", "name", "target", "engines")
	pr := &Program{Line: n.Line}
	pr.Bound = d.str(f["bound"], p+".bound", false)
	pr.Object = d.str(f["object"], p+".object", false)
	pr.Name = d.str(f["name"], p+".name", false)
	pr.Target = d.str(f["target"], p+".target", false)
	pr.Engines = int(d.integer(f["engines"], p+".engines", 0, 1, false))
	switch {
	case d.err != nil:
	case (pr.Bound == "") == (pr.Object == ""):
		d.fail(n, p, "give either bound (a dpperf bound --json file) or object (and target)")
	case pr.Bound != "" && (pr.Name != "" || pr.Target != ""):
		d.fail(n, p, "name and target belong to object; a bound file names its own")
	}
	return pr
}
