package fit

import (
	"math"

	"github.com/dpperf/dpperf/model/queue"
)

// Stage holds the parameters of one stage of the model: an IP that the
// stage has to itself, seen as D engines each with an M/M/1/N queue.
type Stage struct {
	Throughput  float64 // P, B/s
	Parallelism float64 // D
	Queue       float64 // N per engine, including the request in service (+Inf: unbounded)
	Overhead    float64 // O, s
}

// Latency returns the model's mean latency of a request of size bytes when
// the stage carries load B/s: O + s·(1 + Q·μ) with s = D·g/P (equation 7)
// and Q·μ the M/M/1/N wait (equation 12) at the offered utilisation ρ
// whose carried share ρ·(1 − Pro_N) (equation 10) is load/P. At or beyond
// the capacity a finite queue gives its full-queue limit O + N·s; an
// unbounded one +Inf.
func (s Stage) Latency(load, size float64) float64 {
	svc := s.Parallelism * size / s.Throughput
	rho := OfferedRho(load/s.Throughput, s.Queue)
	var wf float64
	if math.IsInf(rho, 1) {
		wf = s.Queue - 1
	} else {
		wf, _ = queue.Stats(rho, s.Queue)
	}
	return s.Overhead + svc*(1+wf)
}

// OfferedRho returns the offered utilisation ρ of an M/M/1/N queue whose
// carried utilisation ρ·(1 − Pro_N(ρ)) is c, or +Inf if c ≥ 1 (or c ≥ 1
// cannot be carried). For N = ∞ it is c itself.
func OfferedRho(c, n float64) float64 {
	if c <= 0 {
		return 0
	}
	if math.IsInf(n, 1) {
		if c >= 1 {
			return math.Inf(1)
		}
		return c
	}
	if c >= 1 {
		return math.Inf(1)
	}
	carried := func(r float64) float64 { return r * (1 - queue.Block(r, n)) }
	lo, hi := c, 2*c+1
	for carried(hi) < c {
		lo, hi = hi, 2*hi
		if hi > 1e15 {
			return math.Inf(1)
		}
	}
	// The carried share grows with ρ: bisect to full precision.
	for range 200 {
		mid := (lo + hi) / 2
		if mid <= lo || mid >= hi {
			break
		}
		if carried(mid) < c {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}
