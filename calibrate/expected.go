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
// one, as has an envelope fit that kept its median fit (fittedExpected);
// for others Expected returns nil. A calibration under the latency
// model that kept the throughput model's spreads (HostTarget) is expected
// at the throughput medians: a typical run overlaps what it can.
func Expected(t *target.Target) (*target.Target, error) {
	c := t.Calibration
	if c != nil && c.Fit != nil {
		return fittedExpected(t)
	}
	if c == nil || len(c.Spread) == 0 || t.Basis != target.BasisCalibrated {
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

// fittedExpected is an envelope-fitted target at the scales of its median
// fit (target.Fit.ExpectedScale), or nil when the fit kept none. A group
// the median fit did not scale (map_write, which no training path
// exercises) is expected at the calibration's own medians, as an unfitted
// calibration is: the envelope holds it at the high percentile times the
// hold-out margin, which is a guarantee's price, not a typical run's.
func fittedExpected(t *target.Target) (*target.Target, error) {
	f := t.Calibration.Fit
	if f.Kind != Envelope || len(f.ExpectedScale) == 0 {
		return nil, nil
	}
	ratio := map[string]float64{}
	var unfitted []string
	for _, g := range target.Groups {
		e, ok := f.ExpectedScale[g]
		if !ok {
			unfitted = append(unfitted, g)
			continue
		}
		if s := f.Scale[g]; s > 0 {
			ratio[g] = e / s
		}
	}
	te := t.Scaled(ratio)
	if len(unfitted) > 0 {
		raw := *t
		cal := *t.Calibration
		cal.Fit = nil
		raw.Calibration, raw.Basis = &cal, target.BasisCalibrated
		base, err := Expected(&raw)
		if err != nil {
			return nil, fmt.Errorf("expected costs of the groups outside the fit: %w", err)
		}
		if base != nil {
			te = te.WithGroups(base, unfitted...)
		}
	}
	te.Name = t.Name + "-expected"
	te.Basis = target.BasisEstimated // an expected rate is no guarantee
	te.Description = t.Description + ", at the scales of the median fit"
	return te, nil
}
