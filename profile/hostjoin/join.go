package hostjoin

import (
	"math"
	"sort"

	"github.com/dpperf/dpperf/profile/analyze"
	"github.com/dpperf/dpperf/profile/event"
)

// Options tune Join; zero values pick the defaults.
type Options struct {
	// Windows is the number of windows the run is cut into for the drift
	// fit (default 16).
	Windows int
	// Hint, when set, is a range [lo, hi] in ns known to hold the offset
	// (from a clock exchange with the peer); the coarse search stays
	// inside it.
	Hint *[2]float64
}

// Result is a join: the initiator's records with the target's times on
// the initiator's clock, those it could not join, and the counts and
// clock estimate for the report.
type Result struct {
	Joined   []event.Record
	Unjoined []event.Record // initiator records without a target half
	Hosts    analyze.Hosts
}

// side is the initiator's view of one record: send and completion times.
type side struct {
	t1, t4 int64
	rec    int // index into the initiator records
}

// pair is one joined request's clock sample.
type pair struct {
	t             float64 // initiator time, midway between send and completion
	theta, delta  float64
	init, halfIdx int
}

// sample is what one initiator request and one target half say of the
// offset: it lies in [theta−delta, theta+delta].
func sample(t1, t2, t3, t4 int64) (theta, delta float64) {
	return (float64(t2-t1) + float64(t3-t4)) / 2, (float64(t4-t1) - float64(t3-t2)) / 2
}

// Join joins the initiator's records (built from its events, carrying
// QID and CID) with the target's halves. incomplete counts target halves
// that could not be closed, for the report.
func (s Sides) Join(init []event.Record, halves []Half, incomplete int64, opt Options) *Result {
	res := &Result{}
	res.Hosts.Join.Initiator = int64(len(init))
	res.Hosts.Join.Target = int64(len(halves)) + incomplete
	byKey := map[uint32][]side{}
	minT1, maxT4 := int64(math.MaxInt64), int64(math.MinInt64)
	noEnds := int64(0)
	for i := range init {
		r := &init[i]
		t1, t4 := s.send(r), s.done(r)
		if t1 == 0 || t4 == 0 {
			noEnds++
			continue
		}
		id := uint32(r.QID)<<16 | uint32(r.CID)
		byKey[id] = append(byKey[id], side{t1, t4, i})
		minT1, maxT4 = min(minT1, t1), max(maxT4, t4)
	}
	for _, l := range byKey {
		sort.Slice(l, func(a, b int) bool { return l[a].t1 < l[b].t1 })
	}
	sort.Slice(halves, func(a, b int) bool { return halves[a].TS[s.First] < halves[b].TS[s.First] })
	used := make([]bool, len(init))
	var pairs []pair
	var why unjoinedCounts
	why.add("target", "incomplete on the target (its recording began or ended inside it, or lost an event)", incomplete)
	why.add("initiator", "no send or completion event on the initiator", noEnds)
	theta, width, ok := s.coarse(byKey, halves, opt.Hint)
	if ok {
		tr := tracker{theta: theta, delta: width}
		for hi := range halves {
			h := &halves[hi]
			t2, t3 := h.TS[s.First], h.TS[s.Last]
			l := byKey[uint32(h.QID)<<16|uint32(h.CID)]
			slack := 2*tr.delta + 20e3
			lo := float64(t2) - tr.theta
			j := sort.Search(len(l), func(i int) bool { return float64(l[i].t1) > lo+slack }) - 1
			if j >= 0 && !used[l[j].rec] && float64(l[j].t4) >= float64(t3)-tr.theta-slack && l[j].t4-l[j].t1 >= t3-t2 {
				th, d := sample(l[j].t1, t2, t3, l[j].t4)
				used[l[j].rec] = true
				pairs = append(pairs, pair{t: float64(l[j].t1+l[j].t4) / 2, theta: th, delta: d, init: l[j].rec, halfIdx: hi})
				tr.add(th, d)
				continue
			}
			switch {
			case h.QID == 0:
				why.add("target", "admin command (queue 0: no block request on the initiator)", 1)
			case len(l) == 0:
				why.add("target", "no initiator request has its queue and command id", 1)
			case lo+slack < float64(minT1):
				why.add("target", "before the initiator's recording", 1)
			case float64(t3)-tr.theta-slack > float64(maxT4):
				why.add("target", "after the initiator's recording", 1)
			default:
				why.add("target", "no initiator request of its queue and command id spans it (lost, filtered or sampled out on the initiator)", 1)
			}
		}
	} else if len(halves) > 0 {
		why.add("target", "no offset joins any of the target's requests with the initiator's", int64(len(halves)))
	}
	clk, line := fit(pairs, opt.Windows)
	res.Hosts.Clock = clk
	res.Hosts.Join.Joined = int64(len(pairs))
	// Unjoined initiator requests, explained against the target's span.
	var firstRecv, lastDone float64 = math.Inf(1), math.Inf(-1)
	for i := range halves {
		t := float64(halves[i].TS[s.First])
		firstRecv = min(firstRecv, t-line(t))
		t = float64(halves[i].TS[s.Last])
		lastDone = max(lastDone, t-line(t))
	}
	for i := range init {
		if used[i] {
			continue
		}
		res.Unjoined = append(res.Unjoined, init[i])
		t1, t4 := s.send(&init[i]), s.done(&init[i])
		if t1 == 0 || t4 == 0 {
			continue
		}
		switch {
		case len(halves) == 0:
			why.add("initiator", "the target recorded no request", 1)
		case float64(t4) < firstRecv:
			why.add("initiator", "before the target's recording", 1)
		case float64(t1) > lastDone:
			why.add("initiator", "after the target's recording", 1)
		default:
			why.add("initiator", "no target request matched it (lost, filtered or sampled out on the target)", 1)
		}
	}
	res.Hosts.Join.Unjoined = why.list
	res.Joined = make([]event.Record, 0, len(pairs))
	sort.Slice(pairs, func(a, b int) bool { return pairs[a].init < pairs[b].init })
	for _, p := range pairs {
		r := init[p.init]
		if s.place(&r, &halves[p.halfIdx], line(p.t)) {
			res.Hosts.Join.Shifted++
		}
		res.Joined = append(res.Joined, r)
	}
	return res
}

// place writes h's times into r, moved onto the initiator's clock by
// theta, and inside r's send and completion if they fall outside; it says
// whether it had to move them.
func (s Sides) place(r *event.Record, h *Half, theta float64) bool {
	off := int64(math.Round(theta))
	t1, t4 := s.send(r), s.done(r)
	first, last := h.TS[s.First]-off, h.TS[s.Last]-off
	var shift int64
	if first < t1 {
		shift = t1 - first
	} else if last > t4 {
		shift = t4 - last
	}
	for k := s.First; k <= s.Last; k++ {
		if h.TS[k] != 0 {
			r.TS[k] = h.TS[k] - off + shift
		}
	}
	return shift != 0
}

// tracker follows the offset through the run: the tightest of the last
// few joins.
type tracker struct {
	theta, delta float64
	recent       [32][2]float64
	n            int
}

func (t *tracker) add(theta, delta float64) {
	t.recent[t.n%len(t.recent)] = [2]float64{theta, delta}
	t.n++
	best := math.Inf(1)
	for i := 0; i < min(t.n, len(t.recent)); i++ {
		if d := t.recent[i][1]; d < best {
			best, t.theta, t.delta = d, t.recent[i][0], d
		}
	}
}

// unjoinedCounts gathers unjoined requests by side and reason, in the
// order reasons first appear.
type unjoinedCounts struct{ list []analyze.Unjoined }

func (u *unjoinedCounts) add(sideName, reason string, n int64) {
	if n == 0 {
		return
	}
	for i := range u.list {
		if u.list[i].Side == sideName && u.list[i].Reason == reason {
			u.list[i].Count += n
			return
		}
	}
	u.list = append(u.list, analyze.Unjoined{Side: sideName, Reason: reason, Count: n})
}
