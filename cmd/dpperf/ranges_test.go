package main

import (
	"flag"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/dpperf/dpperf/internal/cli"
	"github.com/dpperf/dpperf/internal/fail"
)

// everyCommand is every subcommand of dpperf with its own flags.
var everyCommand = [][]string{
	{"bound"}, {"programs"}, {"targets"}, {"targets", "calibrate"}, {"targets", "fit"},
	{"interface"}, {"interface", "diff"},
	{"model", "estimate"}, {"model", "fit"}, {"model", "optimize"}, {"model", "simulate"}, {"model", "compare"}, {"model", "sweep"},
	{"profile", "analyze"}, {"profile", "compare"}, {"profile", "paths"}, {"profile", "run"},
	{"record"}, {"record", "repair"}, {"trace"},
}

// flagSets collects the flag set of every command (parsing -h).
func flagSets(t *testing.T) map[string]*flag.FlagSet {
	t.Helper()
	sets := map[string]*flag.FlagSet{}
	cli.ParsedHook = func(fs *flag.FlagSet) { sets[fs.Name()] = fs }
	defer func() { cli.ParsedHook = nil }()
	for _, c := range everyCommand {
		if _, errs, code := dpperf(t, append(c, "-h")...); code != 0 {
			t.Fatalf("%v -h: exit %d: %s", c, code, errs)
		}
		if sets[strings.Join(c, " ")] == nil {
			t.Fatalf("%v: no flag set named %q parsed", c, strings.Join(c, " "))
		}
	}
	return sets
}

// TestEveryNumericFlagHasARange: an audit that cannot go stale. Every
// numeric flag of every command has a range in flagRanges, and every
// range names a numeric flag of its command.
func TestEveryNumericFlagHasARange(t *testing.T) {
	sets := flagSets(t)
	for name, fs := range sets {
		ranged := map[string]bool{}
		for _, r := range flagRanges[name] {
			ranged[r.Name] = true
			f := fs.Lookup(r.Name)
			if f == nil {
				t.Errorf("%s: range for --%s, which it does not have", name, r.Name)
			} else if _, ok := cli.NumericValue(f); !ok {
				t.Errorf("%s: range for --%s, which is not numeric", name, r.Name)
			}
		}
		fs.VisitAll(func(f *flag.Flag) {
			if _, ok := cli.NumericValue(f); ok && !ranged[f.Name] {
				t.Errorf("%s --%s: numeric flag without a range in flagRanges", name, f.Name)
			}
			if v, ok := cli.NumericValue(f); ok && ranged[f.Name] {
				for _, r := range flagRanges[name] {
					if r.Name == f.Name && !r.Admits(v) {
						t.Errorf("%s --%s: default %s outside its range (%s)", name, f.Name, f.DefValue, r.Want())
					}
				}
			}
		})
	}
	for name := range flagRanges {
		if sets[name] == nil {
			t.Errorf("ranges for %q, which is no command", name)
		}
	}
}

// TestFlagRanges: every value just outside a flag's range (and NaN for
// real-valued flags) is a usage error, exit 2, naming the flag and the
// range, in one line.
func TestFlagRanges(t *testing.T) {
	sets := flagSets(t)
	cases := 0
	for name, rules := range flagRanges {
		fs := sets[name]
		for _, r := range rules {
			f := fs.Lookup(r.Name)
			if f == nil {
				continue
			}
			var bad []string
			_, isDur := f.Value.(flag.Getter).Get().(time.Duration)
			_, isFloat := f.Value.(flag.Getter).Get().(float64)
			_, isUint := f.Value.(flag.Getter).Get().(uint)
			_, isUint64 := f.Value.(flag.Getter).Get().(uint64)
			format := func(x float64) string {
				if isDur {
					return time.Duration(x * float64(time.Second)).String()
				}
				return fmt.Sprint(x)
			}
			below := r.Lo - 1
			if r.LoOpen {
				below = r.Lo
			}
			if isFloat || isDur {
				below = r.Lo - 0.5
				if r.LoOpen {
					below = r.Lo
				}
			}
			if !(isUint || isUint64) || below >= 0 {
				bad = append(bad, format(below))
			}
			if !math.IsInf(r.Hi, 1) {
				bad = append(bad, format(r.Hi+1))
			}
			if isFloat {
				bad = append(bad, "NaN", "+Inf")
			}
			for _, b := range bad {
				cases++
				args := append(strings.Fields(name), "--"+r.Name, b)
				_, errs, code := dpperf(t, args...)
				want := "--" + r.Name + " must be " + r.Want()
				if code != fail.ExitInput || !strings.Contains(errs, want) || strings.Count(strings.TrimSpace(errs), "\n") > 0 {
					t.Errorf("%v: exit %d, %q; want exit 2 and one line with %q", args, code, errs, want)
				}
			}
		}
	}
	if cases < 60 {
		t.Errorf("only %d out-of-range values tried", cases)
	}
}
