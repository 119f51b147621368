package sim

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/dpperf/dpperf/model/flow"
)

// Options control a simulation run.
type Options struct {
	Packets       int    // packets measured (after the warm-up)
	Warmup        int    // packets simulated before measuring; -1 means Packets/10
	Seed          uint64 // random seed; runs with the same seed are identical
	Deterministic bool   // deterministic instead of exponential service at the vertices
	Unbounded     bool   // ignore queue capacities (measures the capacity of equation 4)
	// Progress, if set, is called about every 2^16 events with the number
	// of packets that have arrived.
	Progress func(arrived, total int)
}

type request struct {
	class  int32
	node   int32 // vertex reached or being served
	edge   int32 // edge travelled or arrived by; -1 at ingress
	hop    int8  // transfer stage on the edge
	lim    bool  // being served by the vertex's rate limiter
	frac   float64
	weight float64
	t0     float64
	pkt    int64
	engine int32
	svc    float64
}

type engine struct {
	busy  bool
	queue []int32
	head  int
}

func (e *engine) len() int { return len(e.queue) - e.head }

type sim struct {
	net   *flow.Network
	opt   Options
	rng   *rand.Rand
	ev    evHeap
	seq   uint64
	now   float64
	reqs  []request
	free  []int32
	eng   []engine
	base  []int     // first engine of each station
	nEng  []int     // engines per station
	res   []float64 // next free time of bandwidth resources
	resBW []float64
	cum   []float64 // cumulative packet shares of the classes
	rate  float64   // packet arrival rate

	arrived, total int
	tStart, tEnd   float64
	st             stats
}

// Resource indices of the FIFO bandwidth servers; links follow.
const (
	resIngress = iota
	resEgress
	resInterface
	resMemory
	resLinks
)

// Run simulates the network at its offered load.
func Run(ctx context.Context, n *flow.Network, opt Options) (*Result, error) {
	if opt.Packets <= 0 {
		return nil, fmt.Errorf("simulate: packets must be positive")
	}
	if opt.Warmup < 0 {
		opt.Warmup = opt.Packets / 10
	}
	s := &sim{net: n, opt: opt, rng: rand.New(rand.NewPCG(opt.Seed, opt.Seed^0x9e3779b97f4a7c15)), total: opt.Warmup + opt.Packets}
	if err := s.setup(); err != nil {
		return nil, err
	}
	s.schedule(s.expo(1/s.rate), evArrive, -1)
	count := 0
	for len(s.ev) > 0 {
		e := s.ev.pop()
		s.now = e.t
		switch e.kind {
		case evArrive:
			s.arrive()
		case evAtNode:
			s.atNode(e.id)
		case evDone:
			s.done(e.id)
		case evHop:
			s.hop(e.id)
		}
		count++
		if count&0xffff == 0 {
			if s.opt.Progress != nil {
				s.opt.Progress(s.arrived, s.total)
			}
			if ctx.Err() != nil {
				return s.result(count, true), ctx.Err()
			}
		}
	}
	return s.result(count, false), nil
}

func (s *sim) setup() error {
	n := s.net
	for _, st := range n.Stations {
		d := int(math.Round(st.Engines))
		if d < 1 {
			d = 1
		}
		if math.Abs(float64(d)-st.Engines) > 1e-9 {
			return fmt.Errorf("simulate: station %s has %.3g engines; the simulation needs whole engines", st.Name, st.Engines)
		}
		s.base = append(s.base, len(s.eng))
		s.nEng = append(s.nEng, d)
		for range d {
			s.eng = append(s.eng, engine{})
		}
	}
	s.resBW = []float64{n.Ingress, n.Egress, n.Interface, n.Memory}
	for _, l := range n.Links {
		s.resBW = append(s.resBW, l.Bandwidth)
	}
	s.res = make([]float64, len(s.resBW))
	acc := 0.0
	for _, c := range n.Classes {
		acc += c.Pkts
		s.cum = append(s.cum, acc)
		s.rate += c.Weight * n.Offered / c.Size
	}
	if s.rate <= 0 {
		return fmt.Errorf("simulate: offered load is zero")
	}
	s.st.init(n)
	return nil
}

func (s *sim) schedule(t float64, kind uint8, id int32) {
	s.seq++
	s.ev.push(event{t: t, kind: kind, id: id, seq: s.seq})
}

func (s *sim) expo(mean float64) float64 { return s.rng.ExpFloat64() * mean }

func (s *sim) alloc() int32 {
	if k := len(s.free); k > 0 {
		id := s.free[k-1]
		s.free = s.free[:k-1]
		return id
	}
	s.reqs = append(s.reqs, request{})
	return int32(len(s.reqs) - 1)
}

func (s *sim) release(id int32) { s.free = append(s.free, id) }

// serve passes bytes through bandwidth resource r and returns when they
// have left it.
func (s *sim) serve(r int, bytes float64) float64 {
	bw := s.resBW[r]
	if math.IsInf(bw, 1) || bytes <= 0 {
		return s.now
	}
	start := math.Max(s.now, s.res[r])
	s.res[r] = start + bytes/bw
	return s.res[r]
}

func (s *sim) arrive() {
	pkt := s.arrived
	s.arrived++
	if pkt == s.opt.Warmup {
		s.tStart = s.now
	}
	s.tEnd = s.now
	if s.arrived < s.total {
		s.schedule(s.now+s.expo(1/s.rate), evArrive, -1)
	}
	u := s.rng.Float64() * s.cum[len(s.cum)-1]
	ci := 0
	for ci < len(s.cum)-1 && u > s.cum[ci] {
		ci++
	}
	id := s.alloc()
	s.reqs[id] = request{class: int32(ci), node: flow.Ingress, edge: -1, frac: 1, weight: 1, t0: s.now, pkt: int64(pkt)}
	if pkt >= s.opt.Warmup {
		s.st.offered(ci)
	}
	c := &s.net.Classes[ci]
	t := s.serve(resIngress, c.Size)
	s.schedule(t, evDone, id)
}
