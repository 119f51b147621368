package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode"

	"github.com/dpperf/dpperf/classtime"
	"github.com/dpperf/dpperf/internal/atomicfile"
	"github.com/dpperf/dpperf/internal/fail"
	"github.com/dpperf/dpperf/mapstate"
	"github.com/dpperf/dpperf/perfiface"
	"github.com/dpperf/dpperf/replay/rootcause"
)

// traceFlags are the deployment-specific flags of dpperf interface.
type traceFlags struct {
	trace, maps, percentiles, cdf, slow string
	pprof                               string // set by interface's --pprof: the classes' costs, weighted by packets
	measure                             bool
	runs, perClass                      int
}

func addTraceFlags(fs *flag.FlagSet) *traceFlags {
	f := &traceFlags{}
	fs.StringVar(&f.trace, "trace", "", "replay the capture `PCAP` and print the deployment-specific (percentile) interface")
	fs.StringVar(&f.maps, "maps", "", "with --trace: initial map state `JSON` (mapstate format)")
	fs.StringVar(&f.percentiles, "percentile", "50,90,99", "with --trace: percentiles `LIST` reported per class")
	fs.StringVar(&f.cdf, "cdf", "", "with --trace: draw the cost CDF to `FILE` (.svg or .png)")
	fs.StringVar(&f.slow, "slow", "", "with --trace: rank the conditions and PCVs that explain the packets above `P` (a percentile, e.g. 90, or a cost with its unit, e.g. 300ns)")
	fs.BoolVar(&f.measure, "measure", false, "with --trace: time representatives of each class with BPF_PROG_TEST_RUN (root) and print predicted vs measured")
	fs.IntVar(&f.runs, "runs", 100, "with --measure: single runs per representative")
	fs.IntVar(&f.perClass, "per-class", 3, "with --measure: representatives per class")
	return f
}

// active reports whether a deployment-specific flag was given.
func (f *traceFlags) active() bool {
	return f.trace != "" || f.maps != "" || f.cdf != "" || f.slow != "" || f.measure
}

func parsePercentiles(s string) ([]float64, error) {
	var out []float64
	for _, part := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimPrefix(strings.TrimSpace(part), "p"), 64)
		if err != nil || v < 0 || v > 100 {
			return nil, fail.Usagef("interface: --percentile %q: want numbers in 0..100 separated by commas", s)
		}
		out = append(out, v)
	}
	return out, nil
}

// parseSlow reads --slow: a bare number (or pN) is a percentile, a number
// followed by a unit an absolute cost in the metric's unit.
func parseSlow(s string) (rootcause.Slow, error) {
	num := strings.TrimRightFunc(s, unicode.IsLetter)
	unit := s[len(num):]
	v, err := strconv.ParseFloat(strings.TrimPrefix(num, "p"), 64)
	switch {
	case err != nil || math.IsNaN(v):
	case unit == "" && v > 0 && v < 100:
		return rootcause.Slow{Percentile: v}, nil
	case unit != "" && !strings.HasPrefix(num, "p"):
		return rootcause.Slow{Threshold: v}, nil
	}
	return rootcause.Slow{}, fail.Usagef("interface: --slow %q: want a percentile (90) or a cost with its unit (300ns)", s)
}

// runTrace prints the deployment-specific interface of it on the trace,
// and the root cause and kernel measurement when asked.
func (f *traceFlags) run(ctx context.Context, it *perfiface.Interface, resolution float64, asJSON bool, stdout io.Writer) error {
	if f.trace == "" {
		return fail.Usagef("interface: --maps, --percentile, --cdf, --slow and --measure need --trace")
	}
	want, err := parsePercentiles(f.percentiles)
	if err != nil {
		return err
	}
	var slow rootcause.Slow
	if f.slow != "" {
		if slow, err = parseSlow(f.slow); err != nil {
			return err
		}
	}
	var state *mapstate.State
	if f.maps != "" {
		if state, err = mapstate.ParseFile(f.maps); err != nil {
			return fail.Input(f.maps, err)
		}
	}
	d, err := perfiface.NewDeployment(it, perfiface.DeployOptions{Resolution: resolution, Percentiles: want})
	if err != nil {
		return err
	}
	if state != nil {
		if err := state.Validate(d.Prog(), f.maps); err != nil {
			return fail.Input(f.maps, err)
		}
	}
	if err := d.Replay(ctx, f.trace, state); err != nil {
		return err
	}
	w := bufio.NewWriter(stdout)
	if asJSON {
		err = d.WriteJSON(w)
	} else {
		err = d.Python(w)
	}
	if err != nil {
		return err
	}
	if d.OffPath > 0 {
		fmt.Fprintf(w, "\n# %d packets ran on paths the exploration does not have (first: %v); they are not priced\n", d.OffPath, d.Unmatched())
	}
	if f.cdf != "" {
		if err := d.CDF().WriteFile(f.cdf); err != nil {
			return err
		}
	}
	if f.pprof != "" {
		if err := atomicfile.Write(f.pprof, func(pw io.Writer) error { return it.WriteProfile(pw, nil, d) }); err != nil {
			return err
		}
	}
	if f.slow != "" {
		if err := d.WriteRootCause(w, slow); err != nil {
			return err
		}
	}
	if f.measure {
		if err := w.Flush(); err != nil {
			return err
		}
		if err := f.measureClasses(ctx, w, d, state); err != nil {
			return err
		}
	}
	return w.Flush()
}

// measureClasses times representatives of each class in the kernel and
// prints predicted vs measured (perfiface.Validator).
func (f *traceFlags) measureClasses(ctx context.Context, w io.Writer, d *perfiface.Deployment, state *mapstate.State) error {
	v := d.Validator()
	reps, err := v.Representatives(ctx, f.trace, state, f.perClass)
	if err != nil {
		return err
	}
	m, err := classtime.Open(d.Prog(), classtime.Options{Runs: f.runs})
	if err != nil {
		return err
	}
	defer m.Close()
	rep, err := m.Measure(ctx, classtime.FromReps(reps))
	if err != nil {
		return err
	}
	meas := perfiface.Measurement{Runs: f.runs, Overhead: rep.Overhead}
	for _, c := range rep.Classes {
		meas.Classes = append(meas.Classes, perfiface.Measured{Name: c.Name, Reps: c.Samples, Net: c.Net, Repeat: c.RepeatNs})
	}
	return v.Validate(reps, meas).Write(w)
}
