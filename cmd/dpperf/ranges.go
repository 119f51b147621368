package main

import "github.com/dpperf/dpperf/internal/cli"

func init() { cli.Ranges = flagRanges }

// flagRanges holds the range of every numeric flag, by flag set name;
// cli.Parse checks them, so a value out of range is a usage error naming
// the flag and the range, before any work is done. TestFlagRanges checks
// that every numeric flag has one.
var flagRanges = map[string][]cli.Range{
	"bound": {cli.AtLeast("paths", 1), cli.AtLeast("unroll", 0), cli.AtLeast("time-limit", 0), cli.AtLeast("max-checks", 0), cli.Within("tolerance", 0, 99),
		cli.AtLeast("workers", 0), cli.Above("solver-timeout", 0), cli.Within("max-packet", 60, 65535), cli.AtLeast("memory", 0)},
	"targets calibrate": {cli.AtLeast("runs", 0), cli.AtLeast("cpu", 0), cli.AboveUpTo("percentile", 0, 100)},
	"targets fit": {cli.Above("min", 0), cli.Above("max", 0), cli.AtLeast("runs", 1), cli.AboveUpTo("percentile", 0, 100),
		cli.AtLeast("paths", 1), cli.AtLeast("cpu", 0)},
	"interface": {cli.AtLeast("unroll", 0), cli.AtLeast("workers", 0), cli.Above("solver-timeout", 0), cli.AtLeast("max-paths", 1),
		cli.AtLeast("max-depth", 0), cli.AtLeast("time-limit", 0), cli.AtLeast("resolution", 0), cli.AtLeast("runs", 1), cli.AtLeast("per-class", 1), cli.AtLeast("classes", 1)},
	"interface diff": {cli.AtLeast("unroll", 0), cli.AtLeast("workers", 0), cli.Above("solver-timeout", 0), cli.AtLeast("max-paths", 1),
		cli.AtLeast("max-depth", 0), cli.AtLeast("time-limit", 0), cli.AtLeast("resolution", 0), cli.AtLeast("fail-above", 0)},
	"model optimize": {cli.Within("max-drop", 0, 1), cli.AtLeast("budget", 0)},
	"model simulate": {cli.AtLeast("packets", 1), cli.AtLeast("seed", 0)},
	"model compare":  {cli.AtLeast("packets", 1), cli.AtLeast("seed", 0), cli.AtLeast("fail-above", 0)},
	"model sweep":    {cli.AtLeast("packets", 1), cli.AtLeast("seed", 0)},
	"profile run": {cli.AtLeast("sample", 0), cli.AtLeast("interval", 0), cli.AtLeast("duration", 0),
		cli.AtLeast("buffer-kb", 0), cli.AtLeast("alternate", 0), cli.AtLeast("serve-linger", 0)},
	"profile analyze": {cli.AtLeast("sample", 0), cli.AtLeast("interval", 0)},
	"profile compare": {cli.AtLeast("fail-above", 0)},
	"record":          {cli.Above("period", 0), cli.AtLeast("duration", 0), cli.AtLeast("packets", 1)},
}
