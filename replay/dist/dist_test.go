package dist

import (
	"bytes"
	"image/png"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestPercentilesKnown: the linearly interpolated percentiles (R's type 7)
// of small known inputs.
func TestPercentilesKnown(t *testing.T) {
	// The textbook example: 15, 20, 35, 40, 50.
	ps, err := Percentiles([]float64{50, 15, 40, 20, 35})
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range map[int]float64{0: 15, 5: 16, 20: 19, 30: 23, 40: 29, 50: 35, 100: 50} {
		if math.Abs(ps[p]-want) > 1e-9 {
			t.Errorf("p%d = %v, want %v", p, ps[p], want)
		}
	}
	for _, c := range []struct {
		p, want float64
	}{{99.9, 49.96}, {0.1, 15.02}, {60, 37}, {60.1, 37.02}} {
		if got, _ := Percentile([]float64{15, 20, 35, 40, 50}, c.p); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("p%v = %v, want %v", c.p, got, c.want)
		}
	}
	if _, err := Percentiles(nil); err == nil {
		t.Error("no error for no costs")
	}
	if _, err := Percentiles([]float64{1, math.NaN()}); err == nil {
		t.Error("no error for NaN")
	}
	if _, err := Percentile([]float64{1}, 101); err == nil {
		t.Error("no error for p101")
	}
}

// TestPercentilesProperties: on random costs the percentiles do not
// decrease, p0 and p100 are the smallest and largest cost, and p lies
// between the sorted costs at ranks ⌊(n−1)p/100⌋ and ⌈(n−1)p/100⌉.
func TestPercentilesProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 200; trial++ {
		costs := make([]float64, 1+r.IntN(300))
		for i := range costs {
			costs[i] = float64(r.IntN(50))
		}
		ps, err := Percentiles(costs)
		if err != nil {
			t.Fatal(err)
		}
		s := slices.Sorted(slices.Values(costs))
		if ps[0] != s[0] || ps[100] != s[len(s)-1] {
			t.Fatalf("p0 %v, p100 %v of costs from %v to %v", ps[0], ps[100], s[0], s[len(s)-1])
		}
		for p, v := range ps {
			if p > 0 && v < ps[p-1] {
				t.Fatalf("p%d = %v: below p%d", p, v, p-1)
			}
			h := float64(len(s)-1) * float64(p) / 100
			if lo, hi := s[int(math.Floor(h))], s[int(math.Ceil(h))]; v < lo || v > hi {
				t.Fatalf("p%d = %v: outside [%v, %v]", p, v, lo, hi)
			}
		}
	}
}

// TestPoints: the CDF steps end at 1, rise, and are exact for small
// series and bounded for large ones.
func TestPoints(t *testing.T) {
	pts := Points([]float64{3, 1, 2, 2})
	want := []struct{ x, y float64 }{{1, 0.25}, {2, 0.75}, {3, 1}}
	if len(pts) != len(want) {
		t.Fatalf("points %v", pts)
	}
	for i, w := range want {
		if pts[i].X != w.x || pts[i].Y != w.y {
			t.Errorf("point %d = %v, want %v", i, pts[i], w)
		}
	}
	big := make([]float64, 100000)
	for i := range big {
		big[i] = float64(i)
	}
	pts = Points(big)
	if len(pts) != maxSteps || pts[len(pts)-1].Y != 1 || pts[len(pts)-1].X != 99999 || pts[maxSteps/2-1].X != 49999 {
		t.Errorf("%d points, last %v, median %v", len(pts), pts[len(pts)-1], pts[maxSteps/2-1])
	}
}

// TestWriteCDF writes a two-series plot as PNG and SVG: the PNG decodes
// at the asked size, the SVG carries the title, axis labels and legend.
func TestWriteCDF(t *testing.T) {
	c := CDF{Title: "flowtable: cost per packet", XLabel: "instructions",
		Series: []Series{{Name: "hit", Values: []float64{40, 41, 41, 45}}, {Name: "new flow", Values: []float64{60, 62, 70}}}}
	dir := t.TempDir()
	for _, ext := range []string{"png", "svg"} {
		path := filepath.Join(dir, "cdf."+ext)
		if err := c.WriteFile(path); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if ext == "png" {
			img, err := png.Decode(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			if b := img.Bounds(); b.Dx() < 400 || b.Dy() < 250 {
				t.Errorf("PNG of %v", b)
			}
			continue
		}
		for _, s := range []string{"flowtable: cost per packet", "instructions", "new flow", "share of packets"} {
			if !strings.Contains(string(data), s) {
				t.Errorf("SVG lacks %q", s)
			}
		}
	}
	if err := c.WriteFile(filepath.Join(dir, "cdf.gif")); err == nil {
		t.Error("no error for .gif")
	}
	if err := (CDF{Series: []Series{{Name: "empty"}}}).WriteFile(filepath.Join(dir, "e.svg")); err == nil {
		t.Error("no error for an empty series")
	}
}
