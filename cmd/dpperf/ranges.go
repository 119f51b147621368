package main

import (
	"flag"
	"fmt"
	"math"
	"time"
)

// flagRange is the range of values a numeric flag admits. Durations are
// compared in seconds. NaN and infinities are never admitted.
type flagRange struct {
	name   string
	lo, hi float64 // hi: +Inf for none
	loOpen bool    // lo itself is out of range
}

func atLeast(name string, lo float64) flagRange { return flagRange{name, lo, math.Inf(1), false} }
func above(name string, lo float64) flagRange   { return flagRange{name, lo, math.Inf(1), true} }
func within(name string, lo, hi float64) flagRange {
	return flagRange{name, lo, hi, false}
}
func aboveUpTo(name string, lo, hi float64) flagRange { return flagRange{name, lo, hi, true} }

// want says the range in words.
func (r flagRange) want() string {
	switch {
	case math.IsInf(r.hi, 1) && r.loOpen:
		return fmt.Sprintf("above %g", r.lo)
	case math.IsInf(r.hi, 1):
		return fmt.Sprintf("at least %g", r.lo)
	case r.loOpen:
		return fmt.Sprintf("in (%g, %g]", r.lo, r.hi)
	}
	return fmt.Sprintf("in [%g, %g]", r.lo, r.hi)
}

func (r flagRange) admits(v float64) bool {
	if math.IsNaN(v) || math.IsInf(v, 0) || v > r.hi {
		return false
	}
	if r.loOpen {
		return v > r.lo
	}
	return v >= r.lo
}

// flagRanges holds the range of every numeric flag, by flag set name
// (newFlagSet). parseFlags checks them, so a value out of range is a usage
// error naming the flag and the range, before any work is done;
// TestFlagRanges checks that every numeric flag has one.
var flagRanges = map[string][]flagRange{
	"bound": {atLeast("paths", 1), atLeast("unroll", 0), atLeast("time-limit", 0), atLeast("max-checks", 0),
		atLeast("workers", 0), above("solver-timeout", 0), within("max-packet", 60, 65535), atLeast("memory", 0)},
	"targets calibrate": {atLeast("runs", 0), atLeast("cpu", 0), aboveUpTo("percentile", 0, 100)},
	"targets fit": {above("min", 0), above("max", 0), atLeast("runs", 1), aboveUpTo("percentile", 0, 100),
		atLeast("paths", 1), atLeast("cpu", 0)},
	"interface": {atLeast("unroll", 0), atLeast("workers", 0), above("solver-timeout", 0), atLeast("max-paths", 1),
		atLeast("max-depth", 0), atLeast("time-limit", 0), atLeast("resolution", 0), atLeast("runs", 1), atLeast("per-class", 1), atLeast("classes", 1)},
	"interface diff": {atLeast("unroll", 0), atLeast("workers", 0), above("solver-timeout", 0), atLeast("max-paths", 1),
		atLeast("max-depth", 0), atLeast("time-limit", 0), atLeast("resolution", 0), atLeast("fail-above", 0)},
	"model optimize": {within("max-drop", 0, 1), atLeast("budget", 0)},
	"model simulate": {atLeast("packets", 1), atLeast("seed", 0)},
	"model compare":  {atLeast("packets", 1), atLeast("seed", 0), atLeast("fail-above", 0)},
	"model sweep":    {atLeast("packets", 1), atLeast("seed", 0)},
	"profile run": {atLeast("sample", 0), atLeast("interval", 0), atLeast("duration", 0),
		atLeast("buffer-kb", 0), atLeast("alternate", 0)},
	"profile analyze": {atLeast("sample", 0), atLeast("interval", 0)},
	"profile compare": {atLeast("fail-above", 0)},
	"record":          {above("period", 0), atLeast("duration", 0), atLeast("packets", 1)},
}

// checkRanges checks the numeric flags of fs against flagRanges.
func checkRanges(fs *flag.FlagSet) error {
	for _, r := range flagRanges[fs.Name()] {
		f := fs.Lookup(r.name)
		if f == nil {
			continue // the command does not have it in this build
		}
		v, ok := numericValue(f)
		if !ok {
			return fmt.Errorf("flag range for %s --%s: not a numeric flag", fs.Name(), r.name)
		}
		if !r.admits(v) {
			return usageError(fs, "--%s must be %s, got %s", r.name, r.want(), f.Value.String())
		}
	}
	return nil
}

// numericValue is the value of a numeric flag as a float64 (durations in
// seconds); ok is false for other flags.
func numericValue(f *flag.Flag) (float64, bool) {
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
