package analytic

import (
	"github.com/dpperf/dpperf/model/flow"
	"github.com/dpperf/dpperf/units"
)

// Num is the JSON number type of results (+Inf encodes as null).
type Num = units.Num

// Result is the full evaluation of a network; its JSON form is documented
// in docs/model.md (schema "dpperf.model.estimate/v1").
type Result struct {
	Schema     string         `json:"schema"`
	Name       string         `json:"name"`
	Semantics  string         `json:"semantics"`
	Offered    Num            `json:"offered_Bps"`
	Throughput Num            `json:"throughput_Bps"`
	Carried    Num            `json:"carried_Bps"`
	Bottleneck string         `json:"bottleneck"`
	Latency    Num            `json:"latency_s"`
	DropShare  Num            `json:"drop_share"`
	DropRate   Num            `json:"drop_pps"`
	Components []Component    `json:"components"`
	Stations   []StationQueue `json:"stations"`
	Classes    []ClassResult  `json:"classes"`
}

// Component is one throughput constraint of equation 4.
type Component struct {
	Name     string `json:"name"`
	Kind     string `json:"kind"`
	Capacity Num    `json:"capacity_Bps"` // aggregate ingress rate at which it saturates
	Util     Num    `json:"utilisation"`  // at the offered load
	Headroom Num    `json:"headroom"`     // 1 - throughput/capacity: spare share at the attainable throughput
	Binding  bool   `json:"binding"`
}

// StationQueue is the queueing state of one station at the offered load.
type StationQueue struct {
	Name    string `json:"name"`
	Engines Num    `json:"engines"`
	Queue   Num    `json:"queue"`
	Rho     Num    `json:"rho"`
	Mean    Num    `json:"mean_in_system"`
	Service Num    `json:"service_s"`
	Wait    Num    `json:"wait_s"`
	Drop    Num    `json:"drop_probability"`
}

// ClassResult is the result for one traffic class: one graph at one packet size.
type ClassResult struct {
	Graph      string        `json:"graph"`
	Size       Num           `json:"size_B"`
	Weight     Num           `json:"weight"`
	Throughput Num           `json:"throughput_Bps"`
	Latency    Num           `json:"latency_s"`
	Critical   Num           `json:"critical_path_s"`
	Drop       Num           `json:"drop_probability"`
	Nodes      []NodeLatency `json:"nodes"`
}

// NodeLatency is the latency of one vertex of a class.
type NodeLatency struct {
	Name    string `json:"name"`
	Station string `json:"station"`
	Latency Num    `json:"latency_s"`
}

// Evaluate runs the whole model on n.
func Evaluate(n *flow.Network) *Result {
	e := NewEvaluator(n)
	return e.Result()
}

// Result evaluates the network and builds the full report.
func (e *Evaluator) Result() *Result {
	n := e.Net
	thr, arg := e.Throughput()
	lat, dropB, dropP := e.Latency()
	r := &Result{Schema: "dpperf.model.estimate/v1", Name: n.Name, Semantics: "paper", Offered: Num(n.Offered),
		Throughput: Num(thr), Latency: Num(lat), DropShare: Num(dropP)}
	// Below saturation the queues drop their blocking share of each class;
	// beyond it the bottleneck carries its capacity and the excess is lost
	// (equations 9–12 evaluate every queue at the offered load and would
	// count the same excess again at every stage).
	carried := n.Offered * (1 - dropB)
	if n.Offered > thr {
		carried, dropP = thr, 1-thr/n.Offered
		r.DropShare = Num(dropP)
	}
	r.Carried = Num(carried)
	pps := 0.0
	for _, c := range n.Classes {
		pps += c.Weight * n.Offered / c.Size
	}
	r.DropRate = Num(pps * dropP)
	for i := range e.load {
		if e.load[i] <= 0 {
			continue
		}
		name, kind := e.componentName(i)
		c := e.bw[i] / e.load[i]
		comp := Component{Name: name, Kind: kind, Capacity: Num(c), Util: Num(n.Offered / c), Headroom: Num(1 - thr/c), Binding: i == arg}
		if i == arg {
			r.Bottleneck = name
		}
		r.Components = append(r.Components, comp)
	}
	if arg < 0 {
		r.Bottleneck = "none"
	}
	for s, st := range n.Stations {
		r.Stations = append(r.Stations, StationQueue{Name: st.Name, Engines: Num(st.Engines), Queue: Num(st.Queue), Rho: Num(e.rho[s]),
			Mean: Num(meanInSystem(e.rho[s], st.Queue)), Service: Num(e.sbar[s]), Wait: Num(e.wait[s]), Drop: Num(e.drop[s])})
	}
	for ci, c := range n.Classes {
		cr := ClassResult{Graph: c.Graph, Size: Num(c.Size), Weight: Num(c.Weight), Throughput: Num(thr * c.Weight),
			Latency: Num(e.classT[ci]), Critical: Num(e.classM[ci]), Drop: Num(e.classD[ci])}
		for vi, nd := range c.Nodes {
			if nd.Station < 0 {
				continue
			}
			cr.Nodes = append(cr.Nodes, NodeLatency{Name: nd.Name, Station: n.Stations[nd.Station].Name, Latency: Num(e.nodeLat[ci][vi])})
		}
		r.Classes = append(r.Classes, cr)
	}
	return r
}

func (e *Evaluator) componentName(i int) (string, string) {
	n := e.Net
	ns, nl := len(n.Stations), len(n.Links)
	switch {
	case i < ns:
		if n.Stations[i].Limiter {
			return n.Stations[i].Name, KindLimiter
		}
		return "ip:" + n.Stations[i].Name, KindStation
	case i < ns+nl:
		return "link:" + n.Links[i-ns].Name, KindLink
	case i == ns+nl:
		return "interface", KindInterface
	case i == ns+nl+1:
		return "memory", KindMemory
	case i == ns+nl+2:
		return "ingress", KindIngress
	default:
		return "egress", KindEgress
	}
}
