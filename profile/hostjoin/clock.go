package hostjoin

import (
	"math"
	"sort"

	"gonum.org/v1/gonum/stat"

	"github.com/dpperf/dpperf/profile/analyze"
)

// blockLen is how many consecutive target halves vote for the coarse
// offset: enough to rule out chance alignments, few enough that drift
// inside the block stays far below a network round trip.
const blockLen = 64

// coarse finds an offset at which most halves of a block lie inside an
// initiator request of their key; it returns the offset, the half-width
// of the region of offsets that did as well, and false when no block
// joins more than a quarter of its halves. Blocks are tried from the
// middle of the target's recording outwards, where the two recordings
// most likely overlap.
func (s Sides) coarse(byKey map[uint32][]side, halves []Half, hint *[2]float64) (theta, width float64, ok bool) {
	if len(halves) == 0 {
		return 0, 0, false
	}
	bestVotes := 0
	for _, at := range []float64{0.5, 0.25, 0.75, 0, 1} {
		start := int(at * float64(len(halves)-min(blockLen, len(halves))))
		block := halves[start:min(start+blockLen, len(halves))]
		th, w, votes := s.vote(byKey, block, hint)
		if votes > bestVotes {
			theta, width, bestVotes = th, w, votes
		}
		if votes*10 >= len(block)*9 {
			break
		}
	}
	return theta, width, bestVotes*4 > min(blockLen, len(halves))
}

type endpoint struct {
	at    float64
	delta int
}

// vote returns the middle and half-width of the offsets covered by the
// most halves of block, and how many cover them.
func (s Sides) vote(byKey map[uint32][]side, block []Half, hint *[2]float64) (theta, width float64, votes int) {
	var ends []endpoint
	for i := range block {
		h := &block[i]
		t2, t3 := h.TS[s.First], h.TS[s.Last]
		for _, c := range byKey[uint32(h.QID)<<16|uint32(h.CID)] {
			if c.t4-c.t1 < t3-t2 {
				continue
			}
			lo, hi := float64(t3-c.t4), float64(t2-c.t1)
			if hint != nil {
				lo, hi = max(lo, hint[0]), min(hi, hint[1])
				if lo > hi {
					continue
				}
			}
			ends = append(ends, endpoint{lo, 1}, endpoint{hi, -1})
		}
	}
	// Closed intervals: at one point, openings count before closings.
	sort.Slice(ends, func(a, b int) bool {
		if ends[a].at != ends[b].at {
			return ends[a].at < ends[b].at
		}
		return ends[a].delta > ends[b].delta
	})
	n := 0
	for i, e := range ends {
		n += e.delta
		if n > votes && i+1 < len(ends) {
			votes = n
			lo, hi := e.at, ends[i+1].at
			theta, width = (lo+hi)/2, (hi-lo)/2
		}
	}
	return theta, width, votes
}

// boundOf is the error bound of the line alpha + beta·(t − t0): at each
// window's request the true offset is within delta of theta, so within
// the line's distance from theta plus delta of the line; with linear
// drift, between those points too.
func boundOf(kept []*pair, t0, alpha, beta float64) float64 {
	var bound float64
	for _, p := range kept {
		bound = max(bound, math.Abs(alpha+beta*(p.t-t0)-p.theta)+p.delta)
	}
	return bound
}

// fit cuts the joined requests' span into windows, keeps the tightest
// request of each and fits the offset line through them. It returns the
// clock for the report (nil without joins) and the line.
func fit(pairs []pair, windows int) (*analyze.Clock, func(float64) float64) {
	if len(pairs) == 0 {
		return nil, func(float64) float64 { return 0 }
	}
	if windows <= 0 {
		windows = 16
	}
	t0, t1 := math.Inf(1), math.Inf(-1)
	for _, p := range pairs {
		t0, t1 = min(t0, p.t), max(t1, p.t)
	}
	span := (t1 - t0) / float64(windows)
	best := make([]*pair, windows)
	for i := range pairs {
		w := 0
		if span > 0 {
			w = min(int((pairs[i].t-t0)/span), windows-1)
		}
		if best[w] == nil || pairs[i].delta < best[w].delta {
			best[w] = &pairs[i]
		}
	}
	var xs, ys []float64
	var kept []*pair
	for _, p := range best {
		if p != nil {
			xs, ys, kept = append(xs, p.t-t0), append(ys, p.theta), append(kept, p)
		}
	}
	var alpha, beta float64
	if len(kept) > 1 {
		alpha, beta = stat.LinearRegression(xs, ys, nil, false)
	} else {
		alpha = ys[0]
	}
	bound := boundOf(kept, t0, alpha, beta)
	// A flat line at the middle of the windows' intervals bounds the
	// offset by half their spread; where drift is lost in the network's
	// noise it is the tighter, and the fitted slope only noise.
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, p := range kept {
		lo, hi = min(lo, p.theta-p.delta), max(hi, p.theta+p.delta)
	}
	if (hi-lo)/2 < bound {
		alpha, beta, bound = (hi+lo)/2, 0, (hi-lo)/2
	}
	line := func(t float64) float64 { return alpha + beta*(t-t0) }
	return &analyze.Clock{
		OffsetNS: alpha, RefNS: int64(t0), DriftPPM: beta * 1e6, ErrorBoundNS: bound,
		Requests: int64(len(pairs)), Windows: len(kept),
	}, line
}
