package fit

import "math"

// queueingMedian is how much longer than the fastest request the median
// request of a stage must take for the stage to count as queueing at the
// profiled load: a quarter.
const queueingMedian = 1.25

// Engines estimates, from one profile, the number of servers of a
// split-fcfs stage (requests served in parallel) with Little's law, in
// one of two ways depending on whether the stage queues at the profiled
// load, which it does when its median request takes more than 1.25 × its
// fastest one:
//
//   - not queueing: every request in the stage is in service, so the
//     servers busy at once are at least the mean number of requests in
//     the stage, λ·T (λ the stage's request rate, T its mean latency);
//   - queueing: the servers are all busy and each takes about the
//     fastest request's time t₀ per request, so there are λ·t₀ of them.
//
// The estimate is rounded up, and is 1 when the profile has no minimum
// or median for the stage. At a load where the stage holds less than
// one request it is 1 whatever the device: a light load cannot show
// how many requests a stage serves at once.
func Engines(g *ProfileGroup, s *ProfileStage) float64 {
	if s.Min <= 0 || s.Median <= 0 {
		return 1
	}
	lam := g.IOPS
	if g.Requests > 0 && s.Requests > 0 && s.Requests < g.Requests {
		lam *= float64(s.Requests) / float64(g.Requests)
	}
	busy := lam * s.Latency
	if s.Median > queueingMedian*s.Min {
		busy = lam * s.Min
	}
	// A hair below a whole number is that number (a profile's rates and
	// means are rounded in the last digits).
	return math.Max(1, math.Ceil(busy-1e-9))
}
