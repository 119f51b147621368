package dist

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// Series is one line of a CDF plot.
type Series struct {
	Name   string // legend entry; empty for a single unnamed series
	Values []float64
}

// CDF describes a plot of empirical cumulative distributions: the share
// of values at most x, as a step function of x.
type CDF struct {
	Title  string
	XLabel string // the cost with its unit, e.g. "instructions" or "ns"
	Series []Series
	// Width and Height default to 16 cm × 10 cm.
	Width, Height vg.Length
}

// maxSteps bounds the points drawn per series: larger series are drawn
// through their quantiles at maxSteps evenly spaced shares, which keeps
// files small and the curve exact to 1/maxSteps.
const maxSteps = 2000

// Points returns the CDF of values as steps (x ascending, y the share of
// values ≤ x, ending at 1), at most maxSteps+1 of them.
func Points(values []float64) plotter.XYs {
	s := slices.Clone(values)
	slices.Sort(s)
	n := len(s)
	var pts plotter.XYs
	if n <= maxSteps {
		for i, x := range s {
			if i+1 < n && s[i+1] == x {
				continue // one step per distinct value
			}
			pts = append(pts, plotter.XY{X: x, Y: float64(i+1) / float64(n)})
		}
		return pts
	}
	for k := 1; k <= maxSteps; k++ {
		i := (k*n+maxSteps-1)/maxSteps - 1 // nearest rank of share k/maxSteps
		pts = append(pts, plotter.XY{X: s[i], Y: float64(k) / maxSteps})
	}
	return pts
}

// Plot builds the gonum plot.
func (c CDF) Plot() (*plot.Plot, error) {
	if len(c.Series) == 0 {
		return nil, errors.New("CDF plot of no series")
	}
	p := plot.New()
	p.Title.Text = c.Title
	p.X.Label.Text = c.XLabel
	p.Y.Label.Text = "share of packets with cost ≤ x"
	p.Y.Min, p.Y.Max = 0, 1
	p.Add(plotter.NewGrid())
	p.Legend.Top = false
	p.Legend.Left = false
	for i, s := range c.Series {
		if len(s.Values) == 0 {
			return nil, fmt.Errorf("CDF series %q has no values", s.Name)
		}
		pts := Points(s.Values)
		// Start the step at 0 just left of the smallest value.
		pts = append(plotter.XYs{{X: pts[0].X, Y: 0}}, pts...)
		l, err := plotter.NewLine(pts)
		if err != nil {
			return nil, fmt.Errorf("CDF series %q: %w", s.Name, err)
		}
		l.StepStyle = plotter.PostStep
		l.Color = plotutil.Color(i)
		l.Width = vg.Points(1.5)
		p.Add(l)
		if s.Name != "" {
			p.Legend.Add(s.Name, l)
		}
	}
	return p, nil
}

// Write writes the plot in format "png" or "svg".
func (c CDF) Write(w io.Writer, format string) error {
	p, err := c.Plot()
	if err != nil {
		return err
	}
	wd, ht := c.Width, c.Height
	if wd == 0 {
		wd = 16 * vg.Centimeter
	}
	if ht == 0 {
		ht = 10 * vg.Centimeter
	}
	wt, err := p.WriterTo(wd, ht, format)
	if err != nil {
		return err
	}
	_, err = wt.WriteTo(w)
	return err
}

// WriteFile writes the plot to path, in the format its extension names
// (.png or .svg).
func (c CDF) WriteFile(path string) error {
	format := strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), ".")
	if format != "png" && format != "svg" {
		return fmt.Errorf("%s: a CDF plot is written as .png or .svg", path)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := c.Write(f, format); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	return f.Close()
}
