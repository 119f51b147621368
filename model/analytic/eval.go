package analytic

import (
	"math"

	"github.com/dpperf/dpperf/model/flow"
	"github.com/dpperf/dpperf/model/queue"
)

// Kinds of components that bound throughput.
const (
	KindStation   = "station"
	KindLimiter   = "limiter"
	KindLink      = "link"
	KindInterface = "interface"
	KindMemory    = "memory"
	KindIngress   = "ingress"
	KindEgress    = "egress"
)

// Evaluator evaluates one network repeatedly (e.g. in a sweep or an
// optimizer) and reuses its buffers. Change fields of Net between calls;
// call Eval after every change.
type Evaluator struct {
	Net *flow.Network

	load    []float64 // per component: busy share per B/s of ingress
	bw      []float64 // per component: capacity numerator (1 for stations)
	rho     []float64 // per station at the offered load
	sbar    []float64 // per station: mean service time
	lam     []float64 // per station: request rate (all engines)
	wait    []float64 // per station: mean queueing delay
	drop    []float64 // per station: blocking probability
	nodeLat [][]float64
	expLat  [][]float64
	maxLat  [][]float64
	dropP   [][]float64
	classT  []float64
	classM  []float64
	classD  []float64
}

// NewEvaluator prepares an evaluator for n.
func NewEvaluator(n *flow.Network) *Evaluator {
	e := &Evaluator{Net: n}
	return e
}

func (e *Evaluator) size() {
	n := e.Net
	nc := len(n.Stations) + len(n.Links) + 4
	if cap(e.load) < nc {
		e.load, e.bw = make([]float64, nc), make([]float64, nc)
	}
	e.load, e.bw = e.load[:nc], e.bw[:nc]
	ns := len(n.Stations)
	if cap(e.rho) < ns {
		e.rho, e.sbar, e.lam, e.wait, e.drop = make([]float64, ns), make([]float64, ns), make([]float64, ns), make([]float64, ns), make([]float64, ns)
	}
	e.rho, e.sbar, e.lam, e.wait, e.drop = e.rho[:ns], e.sbar[:ns], e.lam[:ns], e.wait[:ns], e.drop[:ns]
	if len(e.nodeLat) != len(n.Classes) {
		e.nodeLat = make([][]float64, len(n.Classes))
		e.expLat = make([][]float64, len(n.Classes))
		e.maxLat = make([][]float64, len(n.Classes))
		e.dropP = make([][]float64, len(n.Classes))
		e.classT = make([]float64, len(n.Classes))
		e.classM = make([]float64, len(n.Classes))
		e.classD = make([]float64, len(n.Classes))
	}
	for i := range n.Classes {
		k := len(n.Classes[i].Nodes)
		if len(e.nodeLat[i]) != k {
			e.nodeLat[i], e.expLat[i], e.maxLat[i], e.dropP[i] = make([]float64, k), make([]float64, k), make([]float64, k), make([]float64, k)
		}
	}
}

// Throughput returns the attainable aggregate throughput (B/s, equation 4)
// and the index of the binding component.
func (e *Evaluator) Throughput() (float64, int) {
	e.size()
	n := e.Net
	clear(e.load)
	ns, nl := len(n.Stations), len(n.Links)
	for i := range n.Stations {
		e.bw[i] = 1
	}
	for i, l := range n.Links {
		e.bw[ns+i] = l.Bandwidth
	}
	ii := ns + nl
	e.bw[ii], e.bw[ii+1], e.bw[ii+2], e.bw[ii+3] = n.Interface, n.Memory, n.Ingress, n.Egress
	e.load[ii+2] = 1
	for ci := range n.Classes {
		c := &n.Classes[ci]
		w := c.Weight
		for vi := range c.Nodes {
			nd := &c.Nodes[vi]
			if nd.Station >= 0 {
				e.load[nd.Station] += w * nd.Delta / (nd.Rate * n.Stations[nd.Station].Share)
			}
			if nd.Limiter >= 0 {
				e.load[nd.Limiter] += w * nd.Delta / nd.LimRate
			}
		}
		for _, ed := range c.Edges {
			if ed.Link >= 0 {
				e.load[ns+ed.Link] += w * ed.Delta
			}
			e.load[ii] += w * ed.Alpha
			e.load[ii+1] += w * ed.Beta
			if ed.To == flow.Egress {
				e.load[ii+3] += w * ed.Delta
			}
		}
	}
	best, arg := math.Inf(1), -1
	for i := range e.load {
		if e.load[i] <= 0 || math.IsInf(e.bw[i], 1) {
			continue
		}
		if c := e.bw[i] / e.load[i]; c < best {
			best, arg = c, i
		}
	}
	return best, arg
}

// Latency evaluates the queueing model at the network's offered load and
// returns the mean latency per packet (s), the byte share of traffic
// dropped and the packet share dropped. Call Throughput first.
func (e *Evaluator) Latency() (lat, dropBytes, dropPkts float64) {
	n := e.Net
	B := n.Offered
	clear(e.lam)
	clear(e.sbar)
	for s := range n.Stations {
		e.rho[s] = B * e.load[s]
	}
	// Mean service time per station, weighted by request rate.
	for ci := range n.Classes {
		c := &n.Classes[ci]
		for vi := range c.Nodes {
			nd := &c.Nodes[vi]
			if nd.Station < 0 {
				continue
			}
			lam := c.Weight * B * c.Indeg(vi) / c.Size
			st := &n.Stations[nd.Station]
			s := st.Engines * c.Size * nd.Delta / (nd.Rate * st.Share * c.Indeg(vi))
			e.lam[nd.Station] += lam
			e.sbar[nd.Station] += lam * s
			if nd.Limiter >= 0 {
				e.lam[nd.Limiter] += lam
				e.sbar[nd.Limiter] += lam * c.Size * nd.Delta / (nd.LimRate * c.Indeg(vi))
			}
		}
	}
	for s, st := range n.Stations {
		if e.lam[s] > 0 {
			e.sbar[s] /= e.lam[s]
		}
		wf, bl := queue.Stats(e.rho[s], st.Queue)
		e.wait[s], e.drop[s] = wf*e.sbar[s], bl
	}
	for ci := range n.Classes {
		e.classLatency(ci)
		lat += n.Classes[ci].Pkts * e.classT[ci]
		dropBytes += n.Classes[ci].Weight * e.classD[ci]
		dropPkts += n.Classes[ci].Pkts * e.classD[ci]
	}
	return lat, dropBytes, dropPkts
}

// classLatency fills the per-node latencies and the path-weighted (eq. 8),
// critical-path and drop figures of class ci.
func (e *Evaluator) classLatency(ci int) {
	n := e.Net
	c := &n.Classes[ci]
	nl, ex, mx, dp := e.nodeLat[ci], e.expLat[ci], e.maxLat[ci], e.dropP[ci]
	for vi := range c.Nodes {
		nd := &c.Nodes[vi]
		nl[vi], dp[vi] = 0, 0
		if nd.Station < 0 {
			continue
		}
		st := &n.Stations[nd.Station]
		s := st.Engines * c.Size * nd.Delta / (nd.Rate * st.Share * c.Indeg(vi))
		nl[vi] = e.wait[nd.Station] + s
		keep := 1 - e.drop[nd.Station]
		if nd.Limiter >= 0 {
			nl[vi] += e.wait[nd.Limiter] + c.Size*nd.Delta/(nd.LimRate*c.Indeg(vi))
			keep *= 1 - e.drop[nd.Limiter]
		}
		dp[vi] = 1 - keep
	}
	for k := len(c.Topo) - 1; k >= 0; k-- {
		v := c.Topo[k]
		nd := &c.Nodes[v]
		if len(nd.Out) == 0 {
			ex[v], mx[v] = nl[v], nl[v]
			continue
		}
		sumE, maxE, lost := 0.0, 0.0, 0.0
		for _, ei := range nd.Out {
			ed := &c.Edges[ei]
			t := e.edgeTime(c, ed)
			sumE += ed.Split * (t + ex[ed.To])
			maxE = math.Max(maxE, t+mx[ed.To])
			lost += ed.Split * dp[ed.To]
		}
		ex[v], mx[v] = nl[v]+sumE, nl[v]+maxE
		dp[v] = 1 - (1-dp[v])*(1-lost)
	}
	e.classT[ci], e.classM[ci], e.classD[ci] = ex[flow.Ingress], mx[flow.Ingress], dp[flow.Ingress]
}

// edgeTime is the time an edge adds: the source's transfer overhead O
// (unless the edge leaves the device), the data movement over the
// interface and memory (equation 7), and the transfer over an IP-to-IP link
// or the ingress/egress line (equation 6).
func (e *Evaluator) edgeTime(c *flow.Class, ed *flow.Edge) float64 {
	t := 0.0
	if ed.To != flow.Egress {
		t += c.Nodes[ed.From].Overhead
	}
	if ed.Alpha > 0 && !math.IsInf(e.Net.Interface, 1) {
		t += c.Size * ed.Alpha / e.Net.Interface
	}
	if ed.Beta > 0 && !math.IsInf(e.Net.Memory, 1) {
		t += c.Size * ed.Beta / e.Net.Memory
	}
	// Equation 6's g/BW term for the other media an edge crosses: an
	// IP-to-IP link and the ingress and egress lines.
	if ed.Link >= 0 {
		t += c.Size * ed.Delta / e.Net.Links[ed.Link].Bandwidth
	}
	if ed.From == flow.Ingress && !math.IsInf(e.Net.Ingress, 1) {
		t += c.Size / e.Net.Ingress
	}
	if ed.To == flow.Egress && !math.IsInf(e.Net.Egress, 1) {
		t += c.Size * ed.Delta / e.Net.Egress
	}
	return t
}

func meanInSystem(rho, n float64) float64 { return queue.MeanInSystem(rho, n) }
