package target

import "fmt"

// Calibration records how the costs of a measured target were obtained:
// the host, and the spread of the measurements behind each cost. Target
// files written by `dpperf targets calibrate` carry one; targets/README.md
// documents the fields.
type Calibration struct {
	CPU        string  `yaml:"cpu"`                 // model name from /proc/cpuinfo
	Microcode  string  `yaml:"microcode,omitempty"` // microcode revision from /proc/cpuinfo
	Kernel     string  `yaml:"kernel"`              // kernel release
	JIT        string  `yaml:"jit,omitempty"`       // bpf_jit_enable and bpf_jit_harden
	Date       string  `yaml:"date"`                // when it was measured (RFC 3339)
	Processor  int     `yaml:"processor"`           // the CPU every run was pinned to
	Runs       int     `yaml:"runs"`                // measurements per cost, interleaved
	Percentile float64 `yaml:"percentile"`          // the percentile of the runs taken as the cost
	Model      string  `yaml:"model"`               // "throughput", "latency" or "chain": how instruction classes were priced
	// Spread maps a cost ("per_packet", "classes.alu64", "branch.taken",
	// "memory.packet.load", "helpers.map_lookup_elem.hash") to the
	// distribution of its runs.
	Spread map[string]Spread `yaml:"spread"`
	// TypicalSpread holds each cost as the throughput model takes it, from
	// the runs as measured (Spread's are carried to the core's slow state
	// by the speed probe, and may be priced under the latency model): its
	// medians price the expected rate, a typical run, while the costs
	// price the guarantee.
	TypicalSpread map[string]Spread `yaml:"typical_spread,omitempty"`
	// Notes say where a cost is not what was measured, e.g. a
	// difference that came out negative and was written as a floor.
	Notes []string `yaml:"notes,omitempty"`
	// Fit, when set, says the costs were scaled by group to match timed
	// paths of real programs (dpperf targets fit).
	Fit *Fit `yaml:"fit,omitempty"`
}

// Fit records how a target's costs were scaled to match real programs:
// every cost of a group (Groups) was multiplied by the group's scale.
type Fit struct {
	Kind  string             `yaml:"kind"`  // "envelope" (an upper bound of the samples) or "median"
	Scale map[string]float64 `yaml:"scale"` // by group; groups not named kept their costs
	// ExpectedScale (envelopes) is the median fit to the same samples, by
	// group: the target's costs times ExpectedScale/Scale are those of a
	// typical run, which price the expected rate beside the guarantee.
	ExpectedScale map[string]float64 `yaml:"expected_scale,omitempty"`
	Programs      []string           `yaml:"programs"`   // file:program the samples came from
	Samples       int                `yaml:"samples"`    // paths timed
	Percentile    float64            `yaml:"percentile"` // of each path's runs, for "envelope"
	// Relative error (predicted − measured) / measured over the samples.
	ErrMin    float64 `yaml:"err_min"`
	ErrMedian float64 `yaml:"err_median"`
	ErrMax    float64 `yaml:"err_max"`
	// Margin: every group but per_packet widened by this fraction, the
	// largest shortfall of a program's own cost under a fit of the other
	// programs (0: not held out).
	Margin float64 `yaml:"margin,omitempty"`
}

// Spread is the distribution of the runs of one measured cost, in the
// units of the target's first component.
type Spread struct {
	Min    float64 `yaml:"min"`
	Median float64 `yaml:"median"`
	High   float64 `yaml:"high"` // the Percentile of the runs
	Max    float64 `yaml:"max"`
	// How it was measured: the micro-program whose runs these are, when
	// a cost has several (the dearest is taken).
	Variant string `yaml:"variant,omitempty"`
}

func (c *Calibration) check() error {
	if c.Runs <= 0 || c.Percentile <= 0 || c.Percentile > 100 {
		return fmt.Errorf("calibration: runs must be positive and percentile in (0, 100]")
	}
	for name, spreads := range map[string]map[string]Spread{"spread": c.Spread, "typical_spread": c.TypicalSpread} {
		for key, s := range spreads {
			if !(s.Min <= s.Median && s.Median <= s.High && s.High <= s.Max) {
				return fmt.Errorf("calibration.%s.%s: want min <= median <= high <= max, got %g %g %g %g", name, key, s.Min, s.Median, s.High, s.Max)
			}
		}
	}
	return nil
}
