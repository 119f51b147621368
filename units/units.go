// Package units parses and formats the quantities dpperf's commands take
// and print: packet rates ("10Mpps"), bit rates ("25Gbit/s"), with SI
// prefixes.
package units

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// RateKind says whether a rate counts packets or bits.
type RateKind int

const (
	Packets RateKind = iota // packets per second
	Bits                    // bits per second
)

var prefixes = []struct {
	p string
	f float64
}{{"T", 1e12}, {"G", 1e9}, {"M", 1e6}, {"k", 1e3}, {"K", 1e3}, {"", 1}}

// ParseRate reads a rate such as "10Mpps", "54.4Mpkt/s", "25Gbit/s",
// "25Gbps" or "800kpps".
func ParseRate(s string) (float64, RateKind, error) {
	str := strings.TrimSpace(s)
	units := []struct {
		suffix string
		kind   RateKind
	}{{"pkt/s", Packets}, {"pps", Packets}, {"bit/s", Bits}, {"bps", Bits}, {"b/s", Bits}}
	for _, u := range units {
		num, ok := strings.CutSuffix(str, u.suffix)
		if !ok {
			continue
		}
		for _, p := range prefixes {
			if n, ok := strings.CutSuffix(num, p.p); ok && (p.p != "" || !strings.ContainsAny(n, "TGMkK")) {
				v, err := strconv.ParseFloat(strings.TrimSpace(n), 64)
				if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
					return 0, 0, fmt.Errorf("bad rate %q: want a number like 10Mpps or 25Gbit/s", s)
				}
				return v * p.f, u.kind, nil
			}
		}
	}
	return 0, 0, fmt.Errorf("bad rate %q: want a unit of pps, pkt/s, bit/s or bps (e.g. 10Mpps, 25Gbit/s)", s)
}

// SI formats x with an SI prefix and three significant digits: 12.3 M.
func SI(x float64) string {
	if math.IsInf(x, 1) {
		return "unbounded "
	}
	for _, p := range prefixes {
		if p.p == "K" || p.p == "" {
			continue
		}
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
