// Package units parses and formats the quantities dpperf reads and prints:
// data rates ("25Gbit/s", "3.2GB/s", "1GiB/s"), packet rates ("10Mpps"),
// sizes ("1500B", "4KiB") and durations ("2us", "1.5ms"). K, M, G and T are
// powers of 1000 (k is accepted for K), Ki, Mi, Gi and Ti powers of 1024,
// and "bit" is an eighth of a byte. Parsed quantities are in base units:
// bytes per second, packets per second, bytes and seconds.
//
// One scanner reads every quantity: Parse for the model's data rates,
// sizes and durations, ParseRate for the packet or bit rates of `bound`.
package units

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Kind is the dimension of a quantity.
type Kind int

// The dimensions Parse reads.
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

// decimal are the SI prefixes of counts (packets) and of bits and bytes.
var decimal = map[string]float64{"": 1, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}

var binary = map[string]float64{"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40}

var timeMult = map[string]float64{
	"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1,
}

// sizeMult returns the bytes of one unit such as "KiB", "MB" or "Gbit".
func sizeMult(unit string) (float64, bool) {
	for _, base := range []struct {
		suffix string
		f      float64
	}{{"bit", 1.0 / 8}, {"B", 1}} {
		p, ok := strings.CutSuffix(unit, base.suffix)
		if !ok {
			continue
		}
		if m, ok := decimal[p]; ok {
			return m * base.f, true
		}
		if m, ok := binary[p]; ok && base.f == 1 {
			return m, true
		}
	}
	return 0, false
}

// split separates a quantity into its number and its unit (which may be
// separated by spaces). A bare unit or a bare number gives an error.
func split(s string, what, example string) (float64, string, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.' || t[i] == '-' || t[i] == '+' ||
		((t[i] == 'e' || t[i] == 'E') && i > 0 && i+1 < len(t) && (t[i+1] >= '0' && t[i+1] <= '9' || t[i+1] == '-' || t[i+1] == '+'))) {
		i++
	}
	num, unit := t[:i], strings.TrimSpace(t[i:])
	if num == "" {
		return 0, "", fmt.Errorf("%q is not a %s (want a number and a unit, e.g. %s)", s, what, example)
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, "", fmt.Errorf("%q is not a %s (bad number %q)", s, what, num)
	}
	if unit == "" {
		return 0, "", fmt.Errorf("%q has no unit (want a %s such as %s)", s, what, example)
	}
	return v, unit, nil
}

// Parse reads a quantity of kind k from s. The number and unit may be
// separated by spaces. A bare number is an error: units are always explicit.
func Parse(s string, k Kind) (float64, error) {
	v, unit, err := split(s, k.String(), k.Example())
	if err != nil {
		return 0, err
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
		return sizeMult(unit)
	case Time:
		m, ok := timeMult[unit]
		return m, ok
	}
	if p, ok := strings.CutSuffix(unit, "bps"); ok {
		return sizeMult(p + "bit")
	}
	if p, ok := strings.CutSuffix(unit, "b/s"); ok {
		return sizeMult(p + "bit")
	}
	num, ok := strings.CutSuffix(unit, "/s")
	if !ok {
		return 0, false
	}
	return sizeMult(num)
}

// RateKind says whether a rate counts packets or bits.
type RateKind int

// The kinds of rates ParseRate reads.
const (
	Packets RateKind = iota // packets per second
	Bits                    // bits per second
)

// ParseRate reads a packet rate ("10Mpps", "54.4Mpkt/s", "800kpps") in
// packets per second or a data rate ("25Gbit/s", "25Gbps", "3.2GB/s") in
// bits per second.
func ParseRate(s string) (float64, RateKind, error) {
	const example = "10Mpps or 25Gbit/s"
	v, unit, err := split(s, "rate", example)
	if err != nil {
		return 0, 0, fmt.Errorf("bad rate %q: want a number and a unit, e.g. %s", s, example)
	}
	if v < 0 {
		return 0, 0, fmt.Errorf("bad rate %q: negative", s)
	}
	for _, suffix := range []string{"pps", "pkt/s"} {
		if p, ok := strings.CutSuffix(unit, suffix); ok {
			if m, ok := decimal[p]; ok {
				return v * m, Packets, nil
			}
		}
	}
	if m, ok := mult(unit, Rate); ok {
		return v * m * 8, Bits, nil
	}
	return 0, 0, fmt.Errorf("bad rate %q: want a unit of pps, pkt/s, bit/s, bps or B/s (e.g. %s)", s, example)
}
