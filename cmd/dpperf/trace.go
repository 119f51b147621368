package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/dpperf/dpperf/internal/fail"
	"github.com/dpperf/dpperf/record/analyze"
	"github.com/dpperf/dpperf/record/tracecompass"
)

// runTrace is `dpperf trace`, the analysis of a recording; `dpperf record
// analyze` is the same command.
func runTrace(_ context.Context, args []string, stdout, stderr io.Writer) error {
	return runAnalyze("trace", args, stdout, stderr)
}

// runAnalyze analyzes the recording named by args; name is the command's
// name in messages.
func runAnalyze(name string, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet(name, name+" [flags] DIR", stderr)
	jsonOut := fs.Bool("json", false, "print the report as JSON (schema in docs/record.md)")
	hist := fs.Bool("histogram", false, "add duration and fill histograms to the text report")
	perfetto := fs.String("perfetto", "", "also write Chrome/Perfetto trace-event JSON to this file")
	tcDir := fs.String("tracecompass", "", "also write the TraceCompass XML analyses into this directory")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return fail.Usagef("%s: want one recording directory, got %d arguments", name, len(pos))
	}
	dir := pos[0]
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return fail.Inputf(dir, "not a recording directory")
	}
	r, err := analyze.Analyze(dir)
	if err != nil {
		return fail.Input("", fmt.Errorf("%s: %w", name, err))
	}
	if *perfetto != "" {
		if err := writePerfetto(name, dir, *perfetto); err != nil {
			return err
		}
	}
	if *tcDir != "" {
		paths, err := tracecompass.Write(*tcDir)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		for _, p := range paths {
			fmt.Fprintf(stderr, "wrote %s (import in TraceCompass: Manage XML analyses)\n", p)
		}
	}
	if *jsonOut {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	return analyze.WriteText(stdout, r, *hist)
}

// writePerfetto exports through a temporary file renamed into place.
func writePerfetto(name, dir, path string) error {
	return writeAtomically(path, func(w io.Writer) error {
		if _, err := analyze.ExportPerfetto(dir, w); err != nil {
			return fail.Input("", fmt.Errorf("%s: perfetto export: %w", name, err))
		}
		return nil
	})
}
