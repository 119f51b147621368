package sim

import (
	"github.com/dpperf/dpperf/model/flow"
	"github.com/dpperf/dpperf/units"
)

type stats struct {
	all      *hist
	class    []*hist
	offer    []float64 // measured packets per class
	drop     []float64 // dropped weight per class
	deliv    float64   // ingress-equivalent bytes delivered during the arrival window
	arrivals []float64 // requests that reached each station (measured)
	drops    []float64 // requests dropped at each station (measured)
	busyTime []float64 // service time started in the window per station
}

func (st *stats) init(n *flow.Network) {
	st.all = newHist()
	for range n.Classes {
		st.class = append(st.class, newHist())
	}
	st.offer = make([]float64, len(n.Classes))
	st.drop = make([]float64, len(n.Classes))
	st.arrivals = make([]float64, len(n.Stations))
	st.drops = make([]float64, len(n.Stations))
	st.busyTime = make([]float64, len(n.Stations))
}

func (s *sim) measuring() bool { return s.arrived > s.opt.Warmup && s.arrived < s.total }

func (st *stats) offered(ci int) { st.offer[ci]++ }

func (st *stats) delivered(s *sim, r *request, c *flow.Class) {
	if s.measuring() {
		st.deliv += r.weight * c.Size
	}
	if int(r.pkt) >= s.opt.Warmup {
		lat := s.now - r.t0
		st.all.add(lat, r.weight)
		st.class[r.class].add(lat, r.weight)
	}
}

func (st *stats) dropped(s *sim, r *request, station int) {
	if int(r.pkt) >= s.opt.Warmup {
		st.drop[r.class] += r.weight
		st.drops[station]++
		st.arrivals[station]++
	}
}

func (st *stats) arrivedAt(s *sim, station int) {
	if s.measuring() {
		st.arrivals[station]++
	}
}

func (st *stats) busy(s *sim, station int, svc float64) {
	if s.measuring() {
		st.busyTime[station] += svc
	}
}

// Result is the outcome of a simulation; its JSON form is documented in
// docs/model.md (schema "dpperf.model.simulate/v1").
type Result struct {
	Schema     string       `json:"schema"`
	Name       string       `json:"name"`
	Packets    int          `json:"packets"`
	Warmup     int          `json:"warmup"`
	Seed       uint64       `json:"seed"`
	Service    string       `json:"service"`
	Partial    bool         `json:"partial"`
	Events     int          `json:"events"`
	Offered    units.Num    `json:"offered_Bps"`
	Throughput units.Num    `json:"throughput_Bps"`
	Latency    units.Num    `json:"latency_s"`
	P50        units.Num    `json:"p50_s"`
	P90        units.Num    `json:"p90_s"`
	P99        units.Num    `json:"p99_s"`
	P999       units.Num    `json:"p999_s"`
	DropShare  units.Num    `json:"drop_share"`
	Classes    []ClassSim   `json:"classes"`
	Stations   []StationSim `json:"stations"`
}

// ClassSim is the result for one class.
type ClassSim struct {
	Graph   string    `json:"graph"`
	Size    units.Num `json:"size_B"`
	Latency units.Num `json:"latency_s"`
	P99     units.Num `json:"p99_s"`
	Drop    units.Num `json:"drop_share"`
}

// StationSim is the measured state of one station.
type StationSim struct {
	Name string    `json:"name"`
	Util units.Num `json:"utilisation"`
	Drop units.Num `json:"drop_probability"`
}

func (s *sim) result(events int, partial bool) *Result {
	st := &s.st
	svc := "exponential"
	if s.opt.Deterministic {
		svc = "deterministic"
	}
	r := &Result{Schema: "dpperf.model.simulate/v1", Name: s.net.Name, Packets: s.opt.Packets, Warmup: s.opt.Warmup, Seed: s.opt.Seed,
		Service: svc, Partial: partial, Events: events, Offered: units.Num(s.net.Offered)}
	win := s.tEnd - s.tStart
	if win > 0 {
		r.Throughput = units.Num(st.deliv / win)
	}
	r.Latency = units.Num(st.all.mean())
	r.P50, r.P90, r.P99, r.P999 = units.Num(st.all.quantile(0.5)), units.Num(st.all.quantile(0.9)), units.Num(st.all.quantile(0.99)), units.Num(st.all.quantile(0.999))
	var offer, drop float64
	for i, c := range s.net.Classes {
		offer += st.offer[i]
		drop += st.drop[i]
		d := 0.0
		if st.offer[i] > 0 {
			d = st.drop[i] / st.offer[i]
		}
		r.Classes = append(r.Classes, ClassSim{Graph: c.Graph, Size: units.Num(c.Size), Latency: units.Num(st.class[i].mean()),
			P99: units.Num(st.class[i].quantile(0.99)), Drop: units.Num(d)})
	}
	if offer > 0 {
		r.DropShare = units.Num(drop / offer)
	}
	for i, stn := range s.net.Stations {
		u, d := 0.0, 0.0
		if win > 0 {
			u = st.busyTime[i] / (win * float64(s.nEng[i]))
		}
		if st.arrivals[i] > 0 {
			d = st.drops[i] / st.arrivals[i]
		}
		r.Stations = append(r.Stations, StationSim{Name: stn.Name, Util: units.Num(u), Drop: units.Num(d)})
	}
	return r
}
