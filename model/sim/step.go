package sim

import (
	"github.com/dpperf/dpperf/model/flow"
)

// bytesIn is the size of request r at its vertex: g·δ·frac of the edge it
// arrived by.
func (s *sim) bytesIn(r *request) float64 {
	c := &s.net.Classes[r.class]
	return c.Size * c.Edges[r.edge].Delta * r.frac
}

// atNode handles a request reaching a vertex: egress records it, a vertex
// queues it at its rate limiter or station.
func (s *sim) atNode(id int32) {
	r := &s.reqs[id]
	c := &s.net.Classes[r.class]
	if r.node == flow.Egress {
		s.st.delivered(s, r, c)
		s.release(id)
		return
	}
	nd := &c.Nodes[r.node]
	st := nd.Station
	if nd.Limiter >= 0 && !r.lim {
		r.lim = true
		st = nd.Limiter
		r.svc = s.bytesIn(r) / nd.LimRate
	} else {
		r.lim = false
		stn := &s.net.Stations[st]
		r.svc = s.bytesIn(r) * float64(s.nEng[st]) / (nd.Rate * stn.Share)
	}
	if !s.opt.Deterministic {
		r.svc = s.expo(r.svc)
	}
	k := 0
	if s.nEng[st] > 1 {
		k = s.rng.IntN(s.nEng[st])
	}
	ei := s.base[st] + k
	e := &s.eng[ei]
	inSys := e.len()
	if e.busy {
		inSys++
	}
	if !s.opt.Unbounded && float64(inSys) >= s.net.Stations[st].Queue {
		s.st.dropped(s, r, st)
		s.release(id)
		return
	}
	r.engine = int32(ei)
	s.st.arrivedAt(s, st)
	if !e.busy {
		e.busy = true
		s.st.busy(s, st, r.svc)
		s.schedule(s.now+r.svc, evDone, id)
		return
	}
	e.queue = append(e.queue, id)
}

// stationOf returns the station whose engine ei is.
func (s *sim) stationOf(ei int32) int {
	for st := len(s.base) - 1; st >= 0; st-- {
		if int(ei) >= s.base[st] {
			return st
		}
	}
	return 0
}

// done handles the end of a service (or of the ingress line).
func (s *sim) done(id int32) {
	r := &s.reqs[id]
	if r.node != flow.Ingress {
		e := &s.eng[r.engine]
		if e.len() > 0 {
			next := e.queue[e.head]
			e.head++
			if e.head > 64 && e.head*2 > len(e.queue) {
				e.queue = append(e.queue[:0], e.queue[e.head:]...)
				e.head = 0
			}
			nr := &s.reqs[next]
			s.st.busy(s, s.stationOf(nr.engine), nr.svc)
			s.schedule(s.now+nr.svc, evDone, next)
		} else {
			e.busy = false
			if e.head > 0 {
				e.queue, e.head = e.queue[:0], 0
			}
		}
		if r.lim {
			s.atNode(id)
			return
		}
	}
	s.leave(id)
}

// leave splits a served request over the out-edges of its vertex.
func (s *sim) leave(id int32) {
	r := s.reqs[id]
	c := &s.net.Classes[r.class]
	nd := &c.Nodes[r.node]
	frac := r.frac
	if r.edge >= 0 {
		frac *= c.Edges[r.edge].Delta / nd.Delta
	}
	for i, ei := range nd.Out {
		cid := id
		if i > 0 {
			cid = s.alloc()
		}
		s.reqs[cid] = request{class: r.class, node: int32(c.Edges[ei].To), edge: int32(ei), frac: frac,
			weight: r.weight * c.Edges[ei].Split, t0: r.t0, pkt: r.pkt}
		s.hop(cid)
	}
}

// hop advances a request along its edge: overhead, interface, memory,
// link and egress line, in that order; then it reaches the next vertex.
func (s *sim) hop(id int32) {
	r := &s.reqs[id]
	c := &s.net.Classes[r.class]
	ed := &c.Edges[r.edge]
	for r.hop < 5 {
		stage := r.hop
		r.hop++
		var t float64
		switch stage {
		case 0:
			o := c.Nodes[ed.From].Overhead
			if ed.To == flow.Egress || o == 0 {
				continue
			}
			t = s.now + o
		case 1:
			t = s.serve(resInterface, c.Size*ed.Alpha*r.frac)
		case 2:
			t = s.serve(resMemory, c.Size*ed.Beta*r.frac)
		case 3:
			if ed.Link < 0 {
				continue
			}
			t = s.serve(resLinks+ed.Link, c.Size*ed.Delta*r.frac)
		case 4:
			if ed.To != flow.Egress {
				continue
			}
			t = s.serve(resEgress, c.Size*ed.Delta*r.frac)
		}
		if t > s.now {
			s.schedule(t, evHop, id)
			return
		}
	}
	s.atNode(id)
}
