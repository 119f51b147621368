package calibrate

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/dpperf/dpperf/target"
)

// Expected returns the target t's calibration gives at the median of each
// cost's runs instead of its high percentile: the costs a path meets on a
// typical run, where t holds the slow end a guarantee needs. Bounds under
// it are expected rates, not guarantees. Only a target calibrated by this
// package (with the spread of every cost, and not scaled by a fit) has
// one; for others Expected returns nil. A calibration under the latency
// model that kept the throughput model's spreads (HostTarget) is expected
// at the throughput medians: a typical run overlaps what it can.
func Expected(t *target.Target) (*target.Target, error) {
	c := t.Calibration
	if c == nil || len(c.Spread) == 0 || c.Fit != nil || t.Basis != target.BasisCalibrated {
		return nil, nil
	}
	spreads, model := c.Spread, c.Model
	if len(c.TypicalSpread) > 0 {
		spreads, model = c.TypicalSpread, Throughput
	}
	bySize := map[string]bool{}    // "helpers.H.M" priced by key size too
	byOutcome := map[string]bool{} // "helpers.H.M" priced by outcome too
	for key := range spreads {
		if rest, ok := strings.CutPrefix(key, "helper_keys."); ok {
			if i := strings.LastIndexByte(rest, '.'); i > 0 {
				bySize["helpers."+rest[:i]] = true
			}
		}
		if rest, ok := strings.CutPrefix(key, "helper_outcomes."); ok {
			if i := strings.LastIndexByte(rest, '.'); i > 0 {
				byOutcome["helpers."+rest[:i]] = true
			}
		}
	}
	r := &Result{Options: Options{Percentile: 50, Runs: c.Runs, CPU: c.Processor}}
	if d, err := time.Parse(time.RFC3339, c.Date); err == nil {
		r.Date = d
	}
	for _, key := range slices.Sorted(maps.Keys(spreads)) {
		s := spreads[key]
		med := target.Spread{Min: s.Min, Median: s.Median, High: s.Median, Max: s.Max, Variant: s.Variant}
		if rest, ok := strings.CutPrefix(key, "helper_keys."); ok {
			i := strings.LastIndexByte(rest, '.')
			if i < 0 {
				return nil, fmt.Errorf("expected costs: spread key %q names no key size", key)
			}
			r.Measurements = append(r.Measurements, &Measurement{Key: "helpers." + rest[:i], Variant: "key" + rest[i+1:], Spread: med})
			continue
		}
		if rest, ok := strings.CutPrefix(key, "helper_outcomes."); ok {
			// An outcome is the variant that measured it; the main
			// outcome with the largest key is among the key sizes.
			i := strings.LastIndexByte(rest, '.')
			if i < 0 {
				return nil, fmt.Errorf("expected costs: spread key %q names no outcome", key)
			}
			hm := "helpers." + rest[:i]
			if !bySize[hm] || !strings.HasPrefix(s.Variant, "key") {
				r.Measurements = append(r.Measurements, &Measurement{Key: hm, Variant: s.Variant, Spread: med})
			}
			continue
		}
		if bySize[key] || byOutcome[key] {
			continue // its sizes' or outcomes' medians price it
		}
		r.Measurements = append(r.Measurements, &Measurement{Key: key, Variant: s.Variant, Spread: med, Chain: strings.HasPrefix(key, "chain.")})
	}
	e, err := r.Target(t.Name+"-expected", model)
	if err != nil {
		return nil, err
	}
	e.Description = t.Name + " at the median of each cost's runs (expected, not guaranteed)"
	e.Basis = target.BasisEstimated
	return e, nil
}
