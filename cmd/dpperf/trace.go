package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/dpperf/dpperf/internal/atomicfile"
	"github.com/dpperf/dpperf/internal/cli"
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
	fs := cli.NewFlagSet(name, name+" [flags] DIR...", stderr)
	out := cli.AddOutput(fs, "docs/record.md#dpperf-trace---json")
	hist := fs.Bool("histogram", false, "add duration and fill histograms to the text report")
	perfetto := fs.String("perfetto", "", "also write a Perfetto trace to this file (protobuf; trace-event JSON if it ends in .json)")
	perfettoFormat := fs.String("perfetto-format", "", "format of the --perfetto file: proto or json (default: by its name)")
	tcDir := fs.String("tracecompass", "", "also write the TraceCompass XML analyses into this directory")
	pos, err := cli.Parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return cli.UsageError(fs, "want one or more recording directories")
	}
	if len(pos) > 1 && (*perfetto != "" || *tcDir != "") {
		return cli.UsageError(fs, "--perfetto and --tracecompass take one recording directory, got %d", len(pos))
	}
	format, err := perfettoFormatOf(*perfetto, *perfettoFormat)
	if err != nil {
		return fail.Usagef("%s: %v", name, err)
	}
	for _, dir := range pos {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return fail.Inputf(dir, "not a recording directory")
		}
	}
	var reports []*analyze.Report
	for _, dir := range pos {
		r, err := analyze.Analyze(dir)
		if err != nil {
			return fail.Input("", fmt.Errorf("%s: %w", name, err))
		}
		reports = append(reports, r)
	}
	if *perfetto != "" {
		if err := writePerfetto(name, pos[0], *perfetto, format); err != nil {
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
	return out.Write(stdout, func(w io.Writer) error {
		if len(reports) == 1 {
			if out.JSON {
				return cli.WriteJSON(w, reports[0])
			}
			return analyze.WriteText(w, reports[0], *hist)
		}
		if out.JSON {
			return cli.WriteJSON(w, analyze.Reports{Schema: "dpperf.trace.list/v1", Recordings: reports})
		}
		for i, r := range reports {
			if i > 0 {
				fmt.Fprintln(w)
			}
			fmt.Fprintf(w, "== %s\n", pos[i])
			if err := analyze.WriteText(w, r, *hist); err != nil {
				return err
			}
		}
		return nil
	})
}

// perfettoFormatOf returns the format of the Perfetto export to path:
// format when given, else json for a name ending in .json and proto
// otherwise.
func perfettoFormatOf(path, format string) (string, error) {
	switch format {
	case "proto", "json":
		return format, nil
	case "":
		if strings.HasSuffix(strings.ToLower(path), ".json") {
			return "json", nil
		}
		return "proto", nil
	}
	return "", fmt.Errorf("--perfetto-format %q: want proto or json", format)
}

// writePerfetto exports in format (proto or json) through a temporary file
// renamed into place.
func writePerfetto(name, dir, path, format string) error {
	export := analyze.ExportPerfettoProto
	if format == "json" {
		export = analyze.ExportPerfetto
	}
	return atomicfile.Write(path, func(w io.Writer) error {
		if _, err := export(dir, w); err != nil {
			return fail.Input("", fmt.Errorf("%s: perfetto export: %w", name, err))
		}
		return nil
	})
}
