package sweep

import (
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// plotGlyph draws simulation points as crosses.
type plotGlyph struct{}

// DrawGlyph implements draw.GlyphDrawer.
func (plotGlyph) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	draw.CrossGlyph{}.DrawGlyph(c, sty, pt)
}
