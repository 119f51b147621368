package main

import (
	"context"
	"encoding/json"
	"io"

	"github.com/dpperf/dpperf/internal/fail"
	"github.com/dpperf/dpperf/model/analytic"
	"github.com/dpperf/dpperf/model/flow"
	"github.com/dpperf/dpperf/model/spec"
	"github.com/dpperf/dpperf/model/units"
)

func runModelEstimate(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("model estimate", "model estimate [flags] spec.yaml", stderr)
	format := fs.String("format", "text", "output format: text or json")
	offered := fs.String("offered", "", "override traffic.ingress (e.g. 10Gbit/s)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	path, err := oneArg("estimate", pos)
	if err != nil {
		return err
	}
	net, err := loadNetwork(path, *offered)
	if err != nil {
		return err
	}
	r := analytic.Evaluate(net)
	return writeResult(stdout, *format, r.WriteText, r)
}

// loadNetwork reads and compiles a specification, applying an offered-load
// override.
func loadNetwork(path, offered string) (*flow.Network, error) {
	s, err := spec.Load(path)
	if err != nil {
		return nil, fail.Input("", err)
	}
	if offered != "" {
		v, err := units.Parse(offered, units.Rate)
		if err != nil {
			return nil, fail.Usagef("--offered: %v", err)
		}
		s.Traffic.Ingress = v
	}
	n, err := flow.Compile(s)
	if err != nil {
		return nil, fail.Input(path, err)
	}
	return n, nil
}

// writeResult prints v as text (with text) or indented JSON.
func writeResult(w io.Writer, format string, text func(io.Writer) error, v any) error {
	switch format {
	case "text":
		return text(w)
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	return fail.Usagef("--format: want text or json, got %q", format)
}
