package measure

import (
	"fmt"
	"slices"

	"github.com/dpperf/dpperf/bound"
	"github.com/dpperf/dpperf/cfg"
	"github.com/dpperf/dpperf/interp"
)

// settleRuns is how many repeats the interpreter runs to find the path a
// stateful example's repeats settle on; the last settleCheck of them must
// take one path.
const (
	settleRuns  = 24
	settleCheck = 8
)

// pricer prices the paths a replay runs: each path against its own
// predicted rate, not only against the bound.
type pricer struct {
	g                   *cfg.Graph
	guarantee, expected *bound.Costed
}

// check describes one path a replay ran (its executed instructions) with
// its predicted rates and the measured one. A run of the reported path pr
// is priced as the bound priced it, its map lookups by the outcomes of its
// example (bound.Costed.OutcomeCost); another path by the dearest.
func (pc pricer) check(pr *bound.PathReport, name, how string, executed []int32, ns, slowNs float64) (bound.PathCheck, error) {
	edges, err := cfg.PathOf(pc.g, executed)
	if err != nil {
		return bound.PathCheck{}, fmt.Errorf("the %s path on the graph: %w", name, err)
	}
	rate := func(c *bound.Costed) float64 {
		if pr.Status != "" && slices.Equal(edges, pr.Edges) {
			return c.PacketRateWith(edges, pr.KnownLookups())
		}
		return c.PacketRateOf(edges)
	}
	c := bound.PathCheck{Path: name, How: how, Instructions: len(executed), Predicted: rate(pc.guarantee)}
	if pc.expected != nil {
		c.Expected = rate(pc.expected)
	}
	if ns > 0 {
		c.Measured = 1e9 / ns
	}
	if slowNs > 0 {
		c.AtSlowSpeed = 1e9 / slowNs
	}
	c.Held = c.Measured >= c.Predicted
	return c, nil
}

// settled runs the example settleRuns times on a copy of its starting
// maps and returns the path its repeats settle on, or false when the last
// settleCheck runs do not share one path. Runs that read the clock count
// too: the interpreter's clock steps forward as the kernel's does, and the
// check asks only that the path stays.
func settled(it *interp.Interp, in interp.Input, maps *interp.Maps) ([]int32, bool, error) {
	var paths [][]int32
	complete, err := it.Repeats(in, maps, settleRuns, func(res *interp.Result) bool {
		paths = append(paths, res.Path)
		return true
	})
	if err != nil || !complete {
		return nil, false, err
	}
	last := paths[len(paths)-1]
	for _, p := range paths[len(paths)-settleCheck:] {
		if !slices.Equal(p, last) {
			return nil, false, nil
		}
	}
	return last, true, nil
}
