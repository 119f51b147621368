package calibrate

import (
	"slices"

	"github.com/dpperf/dpperf/target"
)

// HeldOut is how one program's timed paths fare under an envelope fitted
// to the other programs' paths only: Short is the largest
// (measured − predicted) / predicted over its paths, positive when a path
// runs slower than that envelope predicts. It is what a program outside
// the fit may expect of the fitted target.
type HeldOut struct {
	Program string
	Short   float64
}

// holdOut fits the envelope once per program, without that program's
// samples, and measures each program against the fit of the others. Fewer
// than two programs: nothing to hold out (nil). A program none of whose
// paths has a cost of its own under the fit (Short −1) sets no margin.
func holdOut(samples []*Sample, opts FitOptions) ([]HeldOut, error) {
	progs := programsOf(samples)
	if len(progs) < 2 {
		return nil, nil
	}
	opts.HoldOut = false
	var out []HeldOut
	for _, p := range progs {
		var rest, own []*Sample
		for _, s := range samples {
			if s.Program == p {
				own = append(own, s)
			} else {
				rest = append(rest, s)
			}
		}
		res, err := fitScales(rest, opts)
		if err != nil {
			return nil, err
		}
		h := HeldOut{Program: p, Short: -1}
		for _, s := range own {
			pred := s.Predicted(res.Scale)
			own := pred - perPacketCost(s, res.Scale)
			if own <= 0 {
				// Only the per-packet overhead, which the margin does
				// not widen: the path says nothing of it.
				continue
			}
			h.Short = max(h.Short, (s.High-pred)/own)
		}
		out = append(out, h)
	}
	return out, nil
}

// programsOf lists the samples' programs, each once, in their order.
func programsOf(samples []*Sample) []string {
	var progs []string
	for _, s := range samples {
		if !slices.Contains(progs, s.Program) {
			progs = append(progs, s.Program)
		}
	}
	return progs
}

// perPacketCost is the per-packet overhead's part of a sample's predicted
// time; the rest, the program's own cost, is what depends on the program.
func perPacketCost(s *Sample, scale map[string]float64) float64 {
	f, ok := scale[target.GroupPerPacket]
	if !ok {
		f = 1
	}
	return f * s.Share[slices.Index(target.Groups, target.GroupPerPacket)]
}

// widen multiplies every group's scale but the per-packet overhead's by
// 1 + margin, the groups outside the fit (scale 1) too: the shortfall is
// of the program's own cost.
func widen(scale map[string]float64, margin float64) {
	if margin <= 0 {
		return
	}
	for _, g := range target.Groups {
		if g == target.GroupPerPacket {
			continue
		}
		if s, ok := scale[g]; ok {
			scale[g] = s * (1 + margin)
		} else {
			scale[g] = 1 + margin
		}
	}
}
