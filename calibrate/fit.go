package calibrate

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize/convex/lp"

	"github.com/dpperf/dpperf/target"
)

// Fit kinds.
const (
	// Envelope scales the groups so that no sample is predicted below its
	// High time, with the least total relative over-estimate: a bound.
	Envelope = "envelope"
	// Median scales the groups to the least total relative error from the
	// samples' Median times: an estimate.
	Median = "median"
)

// FitOptions choose what a fit may change.
type FitOptions struct {
	Kind   string   // Envelope or Median
	Groups []string // the groups fitted; the others keep scale 1
	// Every fitted scale lies in [Min, Max].
	Min, Max float64
	// HoldOut (Envelope only) fits once more per program without its
	// paths and widens the envelope by the largest shortfall of a program
	// under the fit of the others (FitResult.Margin), so that the
	// envelope covers what a program outside the fit did.
	HoldOut bool
}

// FitResult is a fit and how well it matches its samples.
type FitResult struct {
	Kind   string
	Scale  map[string]float64 // by group; fitted groups only
	Fitted []string           // the fitted groups, tied ones joined by "+"
	// Unused names fitted groups no sample has a cost in (left at 1).
	Unused []string
	// Relative error (predicted − measured) / measured against each
	// sample's High (Envelope) or Median time: min, median and max.
	ErrMin, ErrMedian, ErrMax float64
	// HeldOut is every program against a fit of the others (HoldOut);
	// Margin is how much the scales were widened: the largest Short, or 0.
	HeldOut []HeldOut
	Margin  float64
	// Expected (Envelope only) is the Median fit of the same samples and
	// groups: the scales of a typical run, from which calibrate.Expected
	// prices the expected rate beside the guarantee.
	Expected map[string]float64
}

// Fit finds scales of the cost groups, one per group in opts.Groups, that
// make the samples' predicted times (Sample.Predicted) match the measured
// ones: as an upper envelope (a linear program: minimise Σ predicted/High
// subject to predicted ≥ High for every sample) or as the least absolute
// relative deviation from the medians (a linear program too). Groups keep
// scale 1 outside the fit.
func Fit(samples []*Sample, opts FitOptions) (*FitResult, error) {
	res, err := fitScales(samples, opts)
	if err != nil || opts.Kind != Envelope {
		return res, err
	}
	med := opts
	med.Kind, med.HoldOut = Median, false
	m, err := fitScales(samples, med)
	if err != nil {
		return nil, fmt.Errorf("the expected scales: %w", err)
	}
	res.Expected = m.Scale
	return res, nil
}

// fitScales is Fit without an envelope's expected scales (which the
// held-out fits do not need).
func fitScales(samples []*Sample, opts FitOptions) (*FitResult, error) {
	if len(samples) == 0 {
		return nil, errors.New("fit: no samples")
	}
	if opts.Min < 0 || opts.Max < opts.Min {
		return nil, fmt.Errorf("fit: want 0 <= min <= max, got %g and %g", opts.Min, opts.Max)
	}
	res := &FitResult{Kind: opts.Kind, Scale: map[string]float64{}}
	// The fitted groups some sample has a cost in. Column j of A is the
	// summed share of the groups in cols[j] ("alu+branch" ties two groups
	// to one scale).
	var cols [][]int
	var names []string
	for _, g := range opts.Groups {
		var col []int
		for _, one := range strings.Split(g, "+") {
			gi := slices.Index(target.Groups, one)
			if gi < 0 {
				return nil, fmt.Errorf("fit: unknown cost group %q", one)
			}
			col = append(col, gi)
		}
		used := false
		for _, s := range samples {
			used = used || share(s, col) > 0
		}
		if !used {
			res.Unused = append(res.Unused, g)
			continue
		}
		cols, names = append(cols, col), append(names, g)
	}
	fittedGroup := func(gi int) bool {
		for _, col := range cols {
			if slices.Contains(col, gi) {
				return true
			}
		}
		return false
	}
	measured := func(s *Sample) float64 {
		if opts.Kind == Median {
			return s.Median
		}
		return s.High
	}
	n, k := len(samples), len(cols)
	// Rows: one per sample, then one per fitted group (its upper limit).
	// Columns: y (scale − Min) per group, then per sample one (Envelope:
	// slack) or two (Median: over, under), then one slack per group.
	perSample := 1
	if opts.Kind == Median {
		perSample = 2
	} else if opts.Kind != Envelope {
		return nil, fmt.Errorf("fit: unknown kind %q (want %s or %s)", opts.Kind, Envelope, Median)
	}
	ncol := k + perSample*n + k
	a := mat.NewDense(n+k, ncol, nil)
	b := make([]float64, n+k)
	c := make([]float64, ncol)
	for i, s := range samples {
		m := measured(s)
		if m <= 0 {
			return nil, fmt.Errorf("fit: %s has no measured time", s.Program)
		}
		fixed := 0.0 // the groups not fitted, and every group's Min share
		for gi, sh := range s.Share {
			if fittedGroup(gi) {
				fixed += opts.Min * sh
			} else {
				fixed += sh
			}
		}
		sign := 1.0
		if m-fixed < 0 {
			sign = -1 // keep b non-negative
		}
		b[i] = sign * (m - fixed)
		for j, col := range cols {
			a.Set(i, j, sign*share(s, col))
			if opts.Kind == Envelope {
				c[j] += share(s, col) / m
			}
		}
		if opts.Kind == Envelope {
			a.Set(i, k+i, -sign)
		} else {
			a.Set(i, k+2*i, -sign) // predicted above measured
			a.Set(i, k+2*i+1, sign)
			c[k+2*i], c[k+2*i+1] = 1/m, 1/m
		}
	}
	for j := range cols {
		a.Set(n+j, j, 1)
		a.Set(n+j, k+perSample*n+j, 1)
		b[n+j] = opts.Max - opts.Min
	}
	_, x, err := lp.Simplex(c, a, b, 1e-10, nil)
	if err != nil {
		if errors.Is(err, lp.ErrInfeasible) {
			return nil, fmt.Errorf("fit: no scales in [%g, %g] put every sample at or above its measured time", opts.Min, opts.Max)
		}
		return nil, fmt.Errorf("fit: %w", err)
	}
	for j, col := range cols {
		for _, gi := range col {
			res.Scale[target.Groups[gi]] = opts.Min + x[j]
		}
	}
	res.Fitted = names
	if opts.HoldOut && opts.Kind == Envelope {
		if res.HeldOut, err = holdOut(samples, opts); err != nil {
			return nil, err
		}
		for _, h := range res.HeldOut {
			res.Margin = max(res.Margin, h.Short)
		}
		widen(res.Scale, res.Margin)
	}
	errs := make([]float64, n)
	for i, s := range samples {
		errs[i] = (s.Predicted(res.Scale) - measured(s)) / measured(s)
	}
	slices.Sort(errs)
	res.ErrMin, res.ErrMedian, res.ErrMax = errs[0], Percentile(errs, 50), errs[n-1]
	return res, nil
}

// share is a sample's cost in the given groups.
func share(s *Sample, groups []int) float64 {
	sum := 0.0
	for _, gi := range groups {
		sum += s.Share[gi]
	}
	return sum
}
