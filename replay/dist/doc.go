// Package dist summarises per-packet costs: percentiles p0..p100 by the
// nearest-rank method, and cumulative distribution (CDF) plots, one line
// per series (e.g. per packet class), as PNG or SVG with gonum/plot.
package dist
