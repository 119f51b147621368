package main

import (
	"fmt"
	"strings"

	"github.com/dpperf/dpperf/calibrate"
	"github.com/dpperf/dpperf/target"
)

// pricing says, in one clause, why a guarantee under the target t sits
// below its expected rate: what the target's calibration and fit take
// over a typical run. Empty when t has no calibration.
func pricing(t *target.Target) string {
	c := t.Calibration
	if c == nil {
		return ""
	}
	var why []string
	if s, ok := c.Spread[calibrate.SpeedKey]; ok && s.Median > 0 && s.High > 0 {
		why = append(why, fmt.Sprintf("every cost at the p%g of runs carried to the slow state (speed probe %.3g ns against %.3g ns at its median, ×%.2f)",
			c.Percentile, s.High, s.Median, s.High/s.Median))
	} else if c.Percentile > 0 {
		why = append(why, fmt.Sprintf("every cost at the p%g of its runs", c.Percentile))
	}
	if f := c.Fit; f != nil && f.Margin > 0 {
		why = append(why, fmt.Sprintf("the program's own cost (all but the per-packet overhead) times the fit's hold-out margin ×%.3f", 1+f.Margin))
	}
	return strings.Join(why, ", ")
}

// loadPricing is pricing of the target named as dpperf's --target takes it
// (a file or a built-in name); empty when it cannot be read here (the
// host's own target, which bound calibrates on the spot).
func loadPricing(name string) string {
	t, err := target.Load(name)
	if err != nil {
		return ""
	}
	return pricing(t)
}
