package sweep

import (
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// Plot writes a PNG or SVG (by the file extension of name) of y against
// the swept value to w. y is "throughput", "latency" or "p99"; empty:
// latency when the offered load is swept, else throughput.
func (r *Result) Plot(w io.Writer, name, y string) error {
	if y == "" {
		y = "throughput"
		if r.Param == "offered" {
			y = "latency"
		}
	}
	ext := strings.TrimPrefix(strings.ToLower(filepath.Ext(name)), ".")
	if ext != "png" && ext != "svg" {
		return fmt.Errorf("plot: want a .png or .svg file, got %q", name)
	}
	p := plot.New()
	xs, xunit := scaleX(r)
	p.X.Label.Text = r.Param + xunit
	var model, simul plotter.XYs
	for i, pt := range r.Points {
		mv, sv := pick(pt, y)
		if !math.IsNaN(mv) && !math.IsInf(mv, 0) {
			model = append(model, plotter.XY{X: xs[i], Y: mv})
		}
		if !math.IsNaN(sv) && !math.IsInf(sv, 0) && sv != 0 {
			simul = append(simul, plotter.XY{X: xs[i], Y: sv})
		}
	}
	switch y {
	case "throughput":
		p.Y.Label.Text = "carried throughput (Gbit/s)"
	case "latency":
		p.Y.Label.Text = "mean latency (us)"
	case "p99":
		p.Y.Label.Text = "p99 latency (us, simulation)"
	default:
		return fmt.Errorf("plot: unknown y %q (throughput, latency, p99)", y)
	}
	p.Title.Text = y + " vs " + r.Param
	p.Add(plotter.NewGrid())
	if len(model) > 0 {
		l, pts, err := plotter.NewLinePoints(model)
		if err != nil {
			return fmt.Errorf("plot: %w", err)
		}
		p.Add(l, pts)
		p.Legend.Add("model", l, pts)
	}
	if len(simul) > 0 {
		s, err := plotter.NewScatter(simul)
		if err != nil {
			return fmt.Errorf("plot: %w", err)
		}
		s.GlyphStyle.Shape = plotGlyph{}
		p.Add(s)
		p.Legend.Add("simulation", s)
	}
	p.Legend.Top = true
	wt, err := p.WriterTo(6*vg.Inch, 4*vg.Inch, ext)
	if err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	_, err = wt.WriteTo(w)
	return err
}

func scaleX(r *Result) ([]float64, string) {
	xs := make([]float64, len(r.Points))
	f, u := 1.0, ""
	switch r.Unit {
	case "B/s":
		f, u = 8/1e9, " (Gbit/s)"
	case "s":
		f, u = 1e6, " (us)"
	case "B":
		u = " (B)"
	}
	for i, p := range r.Points {
		xs[i] = float64(p.Value) * f
	}
	return xs, u
}

func pick(p Point, y string) (model, simul float64) {
	switch y {
	case "throughput":
		return float64(p.Carried) * 8 / 1e9, float64(p.SimThr) * 8 / 1e9
	case "latency":
		return float64(p.Latency) * 1e6, float64(p.SimLatency) * 1e6
	}
	return math.NaN(), float64(p.SimP99) * 1e6
}
