package replay

import (
	"fmt"

	"github.com/dpperf/dpperf/interp"
	"github.com/dpperf/dpperf/replay/rootcause"
)

// Features names what a run met, for root-cause ranking:
//
//   - conditions: "verdict=PASS", each map operation "<map>.<op>" and each
//     lookup's outcome "<map>.lookup:hit" or "<map>.lookup:miss", each
//     helper without a map by name;
//   - numbers: each PCV summed over the run's calls,
//     "<map>.<op>.<pcv>" (e.g. "flows.lookup.traversals"), and each loop's
//     trips, "loop@<insn>.trips" (insn: the loop header).
//
// Callers add their own (branch conditions, packet classes) to the maps.
func Features(res *interp.Result) (bools map[string]bool, nums map[string]float64) {
	bools = map[string]bool{"verdict=" + Verdict(res.Verdict): true}
	nums = map[string]float64{}
	for _, c := range res.Calls {
		if c.Map == "" {
			bools[c.Helper.String()] = true
			continue
		}
		op := c.Map + "." + c.Op
		bools[op] = true
		if c.Op == "lookup" {
			if c.Ret != 0 {
				bools[op+":hit"] = true
			} else {
				bools[op+":miss"] = true
			}
		}
		for _, v := range c.PCV {
			nums[op+"."+v.Name] += float64(v.Value)
		}
	}
	for _, l := range res.Loops {
		nums[fmt.Sprintf("loop@%d.trips", l.To)] += float64(l.Count)
	}
	return bools, nums
}

// Sample is a root-cause sample of a run with the given cost and the
// run's Features.
func Sample(res *interp.Result, cost float64) rootcause.Sample {
	b, n := Features(res)
	return rootcause.Sample{Cost: cost, Bools: b, Nums: n}
}
