package calibrate

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/dpperf/dpperf/internal/fail"
	"github.com/dpperf/dpperf/target"
)

// ParseGroups reads a comma-separated list of cost groups to scale, each
// one group or several joined by '+' (scaled by one factor).
func ParseGroups(s string) ([]string, error) {
	var groups []string
	for _, g := range strings.Split(s, ",") {
		g = strings.TrimSpace(g)
		for _, one := range strings.Split(g, "+") {
			if !slices.Contains(target.Groups, one) {
				return nil, fmt.Errorf("unknown cost group %q (groups: %s)", one, strings.Join(target.Groups, ", "))
			}
		}
		groups = append(groups, g)
	}
	return groups, nil
}

// ReadSamples reads the paths a former fit timed (the file --samples
// wrote).
func ReadSamples(file string) ([]*Sample, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fail.Input(file, err)
	}
	var ss []*Sample
	if err := json.Unmarshal(data, &ss); err != nil {
		return nil, fail.Input(file, fmt.Errorf("samples: %w", err))
	}
	for i, s := range ss {
		if n := len(s.Share); n >= len(target.Groups)-2 && n < len(target.Groups) {
			// Written before the last groups existed: before chain, its
			// target had no chain section (a share of 0); before
			// map_write, map writes were in the helper share, where they
			// stay (map_write 0).
			s.Share = append(s.Share, make([]float64, len(target.Groups)-n)...)
		}
		if len(s.Share) != len(target.Groups) || s.High <= 0 || s.Median <= 0 {
			return nil, fail.Input(file, fmt.Errorf("sample %d: want %d group shares and positive times", i+1, len(target.Groups)))
		}
	}
	return ss, nil
}

// Fitted returns t with its cost groups scaled as res says, named name
// (t's name with -fit when empty), its calibration recording the fit.
// runs and percentile are the timings' settings.
func Fitted(t *target.Target, name string, samples []*Sample, res *FitResult, runs int, percentile float64) *target.Target {
	fitted := t.Scaled(res.Scale)
	fitted.Name = name
	if fitted.Name == "" {
		fitted.Name = t.Name + "-fit"
	}
	f := &target.Fit{Kind: res.Kind, Scale: res.Scale, ExpectedScale: res.Expected, Samples: len(samples), Percentile: percentile,
		ErrMin: round3(res.ErrMin), ErrMedian: round3(res.ErrMedian), ErrMax: round3(res.ErrMax), Margin: round3(res.Margin),
		Programs: programsOf(samples)}
	fitted.Description = fmt.Sprintf("%s, costs scaled by group to %d timed paths of %d programs (%s)", t.Description, len(samples), len(f.Programs), res.Kind)
	if fitted.Calibration == nil {
		fitted.Calibration = &target.Calibration{Runs: runs, Percentile: percentile, Model: "built-in"}
	} else {
		c := *fitted.Calibration
		fitted.Calibration = &c
	}
	fitted.Calibration.Fit = f
	return fitted
}

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }

// FitReport is the JSON of `dpperf targets fit --json` (json.md).
type FitReport struct {
	Schema string             `json:"schema"`
	Target string             `json:"target"`
	File   string             `json:"file"`
	Kind   string             `json:"kind"`
	Scale  map[string]float64 `json:"scale"`
	Unused []string           `json:"unused"`
	Paths  []FitPath          `json:"paths"`
	Min    float64            `json:"error_min"`
	Median float64            `json:"error_median"`
	Max    float64            `json:"error_max"`
	// Every program against an envelope fitted to the others' paths
	// (--hold-out), and how much the envelope was widened for it.
	HeldOut []FitHeldOut `json:"held_out"`
	Margin  float64      `json:"margin"`
}

// FitHeldOut is one program of FitReport.HeldOut: the largest
// (timing − prediction) / prediction of its paths under a fit without it.
type FitHeldOut struct {
	Program string  `json:"program"`
	Short   float64 `json:"short"`
}

// FitPath is one timed path of a FitReport: its timings and its
// predictions before and after the fit.
type FitPath struct {
	Program  string  `json:"program"`
	Insns    int     `json:"insns"`
	Median   float64 `json:"median_ns"`
	High     float64 `json:"high_ns"`
	Before   float64 `json:"before_ns"`
	Fitted   float64 `json:"fitted_ns"`
	Relative float64 `json:"error"` // (fitted - timing) / timing
}

// NewFitReport describes the fit res of samples, which gave the target
// name written to file.
func NewFitReport(name, file string, samples []*Sample, res *FitResult) *FitReport {
	v := &FitReport{Schema: "dpperf.targets.fit/v1", Target: name, File: file, Kind: res.Kind, Scale: res.Scale, Unused: res.Unused,
		Paths: []FitPath{}, Min: res.ErrMin, Median: res.ErrMedian, Max: res.ErrMax, HeldOut: []FitHeldOut{}, Margin: res.Margin}
	if v.Unused == nil {
		v.Unused = []string{}
	}
	for _, h := range res.HeldOut {
		v.HeldOut = append(v.HeldOut, FitHeldOut(h))
	}
	for _, s := range samples {
		m := s.High
		if res.Kind == Median {
			m = s.Median
		}
		p := s.Predicted(res.Scale)
		v.Paths = append(v.Paths, FitPath{s.Program, s.Insns, s.Median, s.High, s.Predicted(nil), p, (p - m) / m})
	}
	return v
}

// WriteText prints the scales and every path's timings and predictions.
func (v *FitReport) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "fit (%s):", v.Kind)
	for _, g := range target.Groups {
		if s, ok := v.Scale[g]; ok {
			fmt.Fprintf(w, " %s ×%.3f", g, s)
		}
	}
	fmt.Fprintln(w)
	if len(v.Unused) > 0 {
		fmt.Fprintf(w, "not fitted (no path uses them): %s\n", strings.Join(v.Unused, ", "))
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "program\tinsns\tmedian ns\thigh ns\tbefore ns\tfitted ns\terror\t")
	for _, p := range v.Paths {
		fmt.Fprintf(tw, "%s\t%d\t%.1f\t%.1f\t%.1f\t%.1f\t%+.1f%%\t\n", p.Program, p.Insns, p.Median, p.High, p.Before, p.Fitted, 100*p.Relative)
	}
	tw.Flush()
	_, err := fmt.Fprintf(w, "error: min %+.1f%%, median %+.1f%%, max %+.1f%% over %d paths\n",
		100*v.Min, 100*v.Median, 100*v.Max, len(v.Paths))
	if err != nil || len(v.HeldOut) == 0 {
		return err
	}
	worst := v.HeldOut[0]
	for _, h := range v.HeldOut {
		if h.Short > worst.Short {
			worst = h
		}
	}
	_, err = fmt.Fprintf(w, "held out: %d programs, each against a fit of the others; the worst, %s, %+.1f%% of that prediction's own cost (the per-packet overhead left out); every group but per_packet widened by %.1f%%\n",
		len(v.HeldOut), worst.Program, 100*worst.Short, 100*v.Margin)
	return err
}
