package units

import (
	"fmt"
	"math"
	"strconv"
)

var siPrefixes = []struct {
	p string
	f float64
}{{"T", 1e12}, {"G", 1e9}, {"M", 1e6}, {"k", 1e3}}

// SI formats x with an SI prefix and three significant digits: "12.3 M".
func SI(x float64) string {
	if math.IsInf(x, 1) {
		return "unbounded "
	}
	for _, p := range siPrefixes {
		if math.Abs(x) >= p.f {
			return fmt.Sprintf("%.3g %s", x/p.f, p.p)
		}
	}
	return fmt.Sprintf("%.3g ", x)
}

// PacketRate formats packets/s, e.g. "12.3 Mpkt/s".
func PacketRate(pps float64) string { return SI(pps) + "pkt/s" }

// BitRate formats bit/s, e.g. "5.92 Gbit/s".
func BitRate(bps float64) string { return SI(bps) + "bit/s" }

// FormatRate prints a data rate given in bytes per second in Gbit/s (or
// Mbit/s below 1 Gbit/s).
func FormatRate(Bps float64) string {
	switch {
	case math.IsInf(Bps, 1):
		return "unlimited"
	case Bps*8 >= 1e9 || Bps == 0:
		return strconv.FormatFloat(Bps*8/1e9, 'f', 3, 64) + "Gbit/s"
	default:
		return strconv.FormatFloat(Bps*8/1e6, 'f', 3, 64) + "Mbit/s"
	}
}

// FormatTime prints a duration with a unit that keeps 3–4 significant digits.
func FormatTime(sec float64) string {
	a := math.Abs(sec)
	switch {
	case math.IsInf(sec, 1):
		return "inf"
	case a >= 1:
		return strconv.FormatFloat(sec, 'f', 3, 64) + "s"
	case a >= 1e-3:
		return strconv.FormatFloat(sec*1e3, 'f', 3, 64) + "ms"
	case a >= 1e-6 || a == 0:
		return strconv.FormatFloat(sec*1e6, 'f', 3, 64) + "us"
	default:
		return strconv.FormatFloat(sec*1e9, 'f', 1, 64) + "ns"
	}
}

// FormatSize prints a size in bytes.
func FormatSize(b float64) string {
	return strconv.FormatFloat(b, 'f', -1, 64) + "B"
}

// Format prints v, in the base unit of k, as a quantity Parse reads back
// to six significant digits: rates in bit/s with an SI prefix ("9.6Gbit/s"),
// sizes in bytes ("4096B"), durations in ns, us, ms or s ("12.5us").
func Format(v float64, k Kind) string {
	g := func(x float64) string { return strconv.FormatFloat(x, 'g', 6, 64) }
	switch k {
	case Rate:
		b := v * 8
		for _, p := range siPrefixes {
			if math.Abs(b) >= p.f {
				return g(b/p.f) + p.p + "bit/s"
			}
		}
		return g(b) + "bit/s"
	case Size:
		return g(v) + "B"
	}
	a := math.Abs(v)
	switch {
	case a >= 1 || a == 0:
		return g(v) + "s"
	case a >= 1e-3:
		return g(v*1e3) + "ms"
	case a >= 1e-6:
		return g(v*1e6) + "us"
	}
	return g(v*1e9) + "ns"
}
