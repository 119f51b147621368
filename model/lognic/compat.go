package lognic

import (
	"fmt"
	"math"
)

// Candidate is one capacity of §2.1 of the format note, as an aggregate
// ingress rate in GiB/s.
type Candidate struct {
	Name  string
	Value float64
}

// CompatResult is what the public implementation computes.
type CompatResult struct {
	Throughput float64     // GiB/s, the minimum candidate
	Candidates []Candidate // ascending (stable)
	PerCase    []float64   // min × w_u, GiB/s
	Latency    float64     // Σ w_u T_u, seconds; NaN when LatencyUnavailable says why
	// LatencyUnavailable, when not empty, says why the file gives no
	// latency (a node without Q_num or Q_len, no interface or memory
	// bandwidth); throughput and bottleneck are still computed, as the
	// implementation does.
	LatencyUnavailable string
	CaseLat            []float64   // T_u, seconds (longest path)
	NodeLat            [][]float64 // per node, seconds
}

// Compat evaluates f with the implementation's semantics.
func Compat(f *File) (*CompatResult, error) {
	w := f.weights()
	g := f.normPartitions()
	r := &CompatResult{}
	var cands []Candidate
	for ui, u := range f.Cases {
		delta := inDelta(u)
		for ni, n := range u.Nodes {
			if math.IsNaN(n.Performance) || delta[ni] == 0 {
				continue
			}
			if w[ui] == 0 {
				return nil, fmt.Errorf("lognic: use case %d has bandwidth-in 0 beside others (division by zero in the implementation)", ui)
			}
			cands = append(cands, Candidate{Name: fmt.Sprintf("compute:%s(%d-%s)", n.Phy, ui, n.Name), Value: n.Performance * g[ui][ni] / delta[ni] / w[ui]})
		}
	}
	for _, l := range f.Links {
		F := 0.0
		for ui, u := range f.Cases {
			for _, e := range u.Edges {
				a, b := u.Nodes[e.From].Phy, u.Nodes[e.To].Phy
				if b < a {
					a, b = b, a
				}
				if a == l.A && b == l.B {
					F += w[ui] * e.Total
				}
			}
		}
		if F == 0 {
			return nil, fmt.Errorf("lognic: link %s-%s carries no traffic (division by zero in the implementation)", l.A, l.B)
		}
		cands = append(cands, Candidate{Name: "BW:" + l.A + "-" + l.B, Value: l.BW / F})
	}
	var A, M float64
	for ui, u := range f.Cases {
		for _, e := range u.Edges {
			A += w[ui] * e.INTF
			M += w[ui] * e.DRAM
		}
	}
	if A != 0 {
		cands = append(cands, Candidate{Name: "BW:interface", Value: f.Interface / A})
	}
	if M != 0 {
		cands = append(cands, Candidate{Name: "BW:memory", Value: f.Memory / M})
	}
	if len(cands) == 0 {
		return nil, fmt.Errorf("lognic: no throughput candidates")
	}
	r.Candidates = sortedCandidates(cands)
	r.Throughput = r.Candidates[0].Value
	for ui := range f.Cases {
		r.PerCase = append(r.PerCase, r.Throughput*w[ui])
	}
	if math.IsNaN(f.Interface) || math.IsNaN(f.Memory) {
		r.Latency = math.NaN()
		r.LatencyUnavailable = "the hardware gives no interface or memory bandwidth"
		return r, nil
	}
	for ui, u := range f.Cases {
		lat, err := caseLatency(f, u, g[ui])
		if err != nil {
			r.Latency, r.CaseLat, r.NodeLat = math.NaN(), nil, nil
			r.LatencyUnavailable = err.Error()
			return r, nil
		}
		r.NodeLat = append(r.NodeLat, lat)
		t := longestPath(f, u, lat)
		r.CaseLat = append(r.CaseLat, t)
		r.Latency += w[ui] * t
	}
	return r, nil
}

func inDelta(u UseCase) []float64 {
	d := make([]float64, len(u.Nodes))
	for _, e := range u.Edges {
		d[e.To] += e.Total
	}
	return d
}

// caseLatency is §2.2: q + s + O per node with the implementation's ρ and s.
func caseLatency(f *File, u UseCase, gamma []float64) ([]float64, error) {
	delta := inDelta(u)
	deg := make([]float64, len(u.Nodes))
	for _, e := range u.Edges {
		deg[e.To]++
	}
	G := u.Granularity / GiB
	lat := make([]float64, len(u.Nodes))
	for i, n := range u.Nodes {
		switch {
		case math.IsNaN(n.Performance):
			continue
		case gamma[i] == 0:
			lat[i] = 1
			continue
		}
		if math.IsNaN(n.QNum) || math.IsNaN(n.QLen) {
			return nil, fmt.Errorf("node %s has no Q_num or Q_len, which latency needs", n.Name)
		}
		rho := u.BandwidthIn * delta[i] / (n.Performance * gamma[i])
		s := G * delta[i] * n.QNum / n.Performance / deg[i]
		lat[i] = queueFactor(rho, n.QLen)*s + s + n.Overhead
	}
	return lat, nil
}

// queueFactor is ρ/(1-ρ) - N/(ρ^-N - 1), (N-1)/2 at ρ = 1, evaluated as
// the implementation does (IEEE arithmetic, no error on ρ = 0).
func queueFactor(rho, n float64) float64 {
	if rho == 1 {
		return (n - 1) / 2
	}
	if rho == 0 {
		return 0
	}
	return rho/(1-rho) - n/(math.Pow(rho, -n)-1)
}

// longestPath is §2.3: edge weight lat(src) + G(α/intf + β/mem), longest
// path over the DAG.
func longestPath(f *File, u UseCase, lat []float64) float64 {
	G := u.Granularity / GiB
	n := len(u.Nodes)
	indeg := make([]int, n)
	for _, e := range u.Edges {
		indeg[e.To]++
	}
	dist := make([]float64, n)
	var order []int
	for i := range indeg {
		if indeg[i] == 0 {
			order = append(order, i)
		}
	}
	best := 0.0
	for k := 0; k < len(order); k++ {
		v := order[k]
		for _, e := range u.Edges {
			if e.From != v {
				continue
			}
			wgt := lat[v] + G*(e.INTF/f.Interface+e.DRAM/f.Memory)
			if d := dist[v] + wgt; d > dist[e.To] {
				dist[e.To] = d
			}
			if indeg[e.To]--; indeg[e.To] == 0 {
				order = append(order, e.To)
			}
		}
	}
	for _, d := range dist {
		best = math.Max(best, d)
	}
	return best
}
