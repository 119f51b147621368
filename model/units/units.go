// Package units parses and prints the quantities of model specifications:
// data rates ("25Gbit/s", "3.2GB/s"), sizes ("1500B", "4KiB") and durations
// ("2us", "1.5ms"). Every quantity is held in base units: bytes per second,
// bytes and seconds.
package units

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Kind is the dimension of a quantity.
type Kind int

// The dimensions a specification uses.
const (
	Rate Kind = iota // bytes per second
	Size             // bytes
	Time             // seconds
)

func (k Kind) String() string {
	switch k {
	case Rate:
		return "data rate"
	case Size:
		return "size"
	default:
		return "duration"
	}
}

// Example returns a valid example of a quantity of kind k, for error messages.
func (k Kind) Example() string {
	switch k {
	case Rate:
		return "25Gbit/s"
	case Size:
		return "1500B"
	default:
		return "2us"
	}
}

var sizeMult = map[string]float64{
	"B": 1, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12,
	"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40,
	"bit": 1.0 / 8, "Kbit": 1e3 / 8, "Mbit": 1e6 / 8, "Gbit": 1e9 / 8, "Tbit": 1e12 / 8,
}

var rateAlias = map[string]string{
	"bps": "bit", "Kbps": "Kbit", "Mbps": "Mbit", "Gbps": "Gbit", "Tbps": "Tbit",
}

var timeMult = map[string]float64{
	"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1,
}

// Parse reads a quantity of kind k from s. The number and unit may be
// separated by spaces. A bare number is an error: units are always explicit.
func Parse(s string, k Kind) (float64, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.' || t[i] == '-' || t[i] == '+' ||
		((t[i] == 'e' || t[i] == 'E') && i > 0 && i+1 < len(t) && (t[i+1] >= '0' && t[i+1] <= '9' || t[i+1] == '-' || t[i+1] == '+'))) {
		i++
	}
	num, unit := t[:i], strings.TrimSpace(t[i:])
	if num == "" {
		return 0, fmt.Errorf("%q is not a %s (want a number and a unit, e.g. %s)", s, k, k.Example())
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q is not a %s (bad number %q)", s, k, num)
	}
	if unit == "" {
		return 0, fmt.Errorf("%q has no unit (want a %s such as %s)", s, k, k.Example())
	}
	m, ok := mult(unit, k)
	if !ok {
		return 0, fmt.Errorf("%q: unknown %s unit %q (e.g. %s)", s, k, unit, k.Example())
	}
	return v * m, nil
}

func mult(unit string, k Kind) (float64, bool) {
	switch k {
	case Size:
		m, ok := sizeMult[unit]
		return m, ok
	case Time:
		m, ok := timeMult[unit]
		return m, ok
	}
	if a, ok := rateAlias[unit]; ok {
		return sizeMult[a], true
	}
	num, den, ok := strings.Cut(unit, "/")
	if !ok || den != "s" {
		return 0, false
	}
	m, ok := sizeMult[num]
	return m, ok
}

// FormatRate prints a rate in Gbit/s (or Mbit/s below 1 Gbit/s).
func FormatRate(bps float64) string {
	switch {
	case math.IsInf(bps, 1):
		return "unlimited"
	case bps*8 >= 1e9 || bps == 0:
		return strconv.FormatFloat(bps*8/1e9, 'f', 3, 64) + "Gbit/s"
	default:
		return strconv.FormatFloat(bps*8/1e6, 'f', 3, 64) + "Mbit/s"
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
