package cli

import (
	"flag"
	"fmt"
	"math"
	"time"
)

// A Range is the range of values a numeric flag admits. Durations are
// compared in seconds. NaN and infinities are never admitted.
type Range struct {
	Name   string  // the flag
	Lo, Hi float64 // Hi: +Inf for none
	LoOpen bool    // Lo itself is out of range
}

// AtLeast admits [lo, +Inf).
func AtLeast(name string, lo float64) Range { return Range{name, lo, math.Inf(1), false} }

// Above admits (lo, +Inf).
func Above(name string, lo float64) Range { return Range{name, lo, math.Inf(1), true} }

// Within admits [lo, hi].
func Within(name string, lo, hi float64) Range { return Range{name, lo, hi, false} }

// AboveUpTo admits (lo, hi].
func AboveUpTo(name string, lo, hi float64) Range { return Range{name, lo, hi, true} }

// Want says the range in words.
func (r Range) Want() string {
	switch {
	case math.IsInf(r.Hi, 1) && r.LoOpen:
		return fmt.Sprintf("above %g", r.Lo)
	case math.IsInf(r.Hi, 1):
		return fmt.Sprintf("at least %g", r.Lo)
	case r.LoOpen:
		return fmt.Sprintf("in (%g, %g]", r.Lo, r.Hi)
	}
	return fmt.Sprintf("in [%g, %g]", r.Lo, r.Hi)
}

// Admits reports whether v is in the range.
func (r Range) Admits(v float64) bool {
	if math.IsNaN(v) || math.IsInf(v, 0) || v > r.Hi {
		return false
	}
	if r.LoOpen {
		return v > r.Lo
	}
	return v >= r.Lo
}

// Ranges holds the range of every numeric flag, by flag set name. Parse
// checks them, so that a value out of range is a usage error naming the
// flag and the range, before any work is done.
var Ranges map[string][]Range

// checkRanges checks the numeric flags of fs against Ranges.
func checkRanges(fs *flag.FlagSet) error {
	for _, r := range Ranges[fs.Name()] {
		f := fs.Lookup(r.Name)
		if f == nil {
			continue // the command does not have it in this build
		}
		v, ok := NumericValue(f)
		if !ok {
			return fmt.Errorf("flag range for %s --%s: not a numeric flag", fs.Name(), r.Name)
		}
		if !r.Admits(v) {
			return UsageError(fs, "--%s must be %s, got %s", r.Name, r.Want(), f.Value.String())
		}
	}
	return nil
}

// NumericValue is the value of a numeric flag as a float64 (durations in
// seconds); ok is false for other flags.
func NumericValue(f *flag.Flag) (float64, bool) {
	g, ok := f.Value.(flag.Getter)
	if !ok {
		return 0, false
	}
	switch v := g.Get().(type) {
	case int:
		return float64(v), true
	case int64:
		return float64(v), true
	case uint:
		return float64(v), true
	case uint64:
		return float64(v), true
	case float64:
		return v, true
	case time.Duration:
		return v.Seconds(), true
	}
	return 0, false
}
