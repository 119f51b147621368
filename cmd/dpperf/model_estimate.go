package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/dpperf/dpperf/internal/cli"
	"github.com/dpperf/dpperf/internal/fail"
	"github.com/dpperf/dpperf/model/analytic"
	"github.com/dpperf/dpperf/model/flow"
	"github.com/dpperf/dpperf/model/lognic"
	"github.com/dpperf/dpperf/model/spec"
)

func runModelEstimate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("model estimate", "model estimate [flags] spec.yaml", stderr)
	format := addModelOutput(fs, stderr)
	offered := fs.String("offered", "", "override traffic.ingress (e.g. 10Gbit/s)")
	var sets cli.List
	fs.Var(&sets, "set", "override a parameter, e.g. size=64B or g.v.placement=1 (repeatable; names as for sweep)")
	compat := fs.String("compat", "", "for files in the LogNIC execution-graph format: 'lognic' reproduces that implementation's numbers")
	pf := addProgramStageFlags(fs)
	pos, err := cli.Parse(fs, args)
	if err != nil {
		return err
	}
	path, err := oneArg("estimate", pos)
	if err != nil {
		return err
	}
	if *compat != "" {
		if *compat != "lognic" {
			return fail.Usagef("--compat: only 'lognic' is known, got %q", *compat)
		}
		return estimateCompat(path, format, stdout)
	}
	net, err := loadNetwork(ctx, pf, path, *offered, sets...)
	if err != nil {
		return err
	}
	r := analytic.Evaluate(net)
	return writeResult(stdout, format, func(w io.Writer) error {
		if err := r.WriteText(w); err != nil {
			return err
		}
		return writeProgramStages(w, pf)
	}, r)
}

// loadNetwork reads and compiles a specification or a LogNIC-format
// file, applying an offered-load override and --set overrides.
func loadNetwork(ctx context.Context, pf *programFlags, path, offered string, sets ...string) (*flow.Network, error) {
	m, _, err := loadTunable(ctx, pf, path, offered, sets)
	if err != nil {
		return nil, err
	}
	n, err := m.Compile()
	if err != nil {
		return nil, fail.Input(path, err)
	}
	return n, nil
}

// loadTunable reads a specification of our format or a file of the LogNIC
// format (detected by its top-level software list) and applies an
// offered-load override (for LogNIC files it scales every bandwidth-in)
// and --set PARAM=VALUE overrides, which it returns. Vertices that name a
// packet program get their service time first (pf may be nil: worst case).
func loadTunable(ctx context.Context, pf *programFlags, path, offered string, sets []string) (flow.Tunable, []spec.Param, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fail.Input("", fmt.Errorf("open spec: %w", err))
	}
	var m flow.Tunable
	if lognic.Detect(data) {
		f, err := lognic.Parse(data, path)
		if err != nil {
			return nil, nil, fail.Input("", err)
		}
		m = f
	} else {
		s, err := spec.Read(bytes.NewReader(data), path)
		if err != nil {
			return nil, nil, fail.Input("", err)
		}
		if err := resolvePrograms(ctx, s, path, pf); err != nil {
			return nil, nil, err
		}
		m = flow.FromSpec(s)
	}
	if offered != "" {
		sets = append([]string{"offered=" + offered}, sets...)
	}
	changed, err := flow.SetAll(m, sets)
	if err != nil {
		return nil, nil, fail.Usagef("--set %v", err)
	}
	return m, changed, nil
}

// writeResult prints v as text (with text) or, with --json, as indented
// JSON, to stdout or the file of -o.
func writeResult(stdout io.Writer, o *cli.Output, text func(io.Writer) error, v any) error {
	return o.Write(stdout, func(w io.Writer) error {
		if !o.JSON {
			return text(w)
		}
		return cli.WriteJSON(w, v)
	})
}

// addModelOutput registers the output flags of a model command, and the
// former --format text|json as a deprecated spelling of --json.
func addModelOutput(fs *flag.FlagSet, stderr io.Writer) *cli.Output {
	o := cli.AddOutput(fs, "docs/model.md#json-schemas")
	cli.Deprecated(fs, "format", "--json", stderr, false, func(v string) error {
		switch v {
		case "text", "json":
			o.JSON = v == "json"
			return nil
		}
		return fmt.Errorf("want text or json, got %q", v)
	})
	return o
}

func estimateCompat(path string, format *cli.Output, stdout io.Writer) error {
	f, err := lognic.Load(path)
	if err != nil {
		return fail.Input("", err)
	}
	r, err := lognic.Compat(f)
	if err != nil {
		return fail.Input(path, err)
	}
	return writeResult(stdout, format, r.WriteText, r.Report())
}
