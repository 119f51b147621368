package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/dpperf/dpperf/internal/cli"
	"github.com/dpperf/dpperf/internal/fail"
	"github.com/dpperf/dpperf/record"
	"github.com/dpperf/dpperf/record/capture"
	"github.com/dpperf/dpperf/record/kernel"
	"github.com/dpperf/dpperf/record/pipeline"
)

func runRecord(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 {
		switch args[0] {
		case "analyze":
			return runAnalyze("record analyze", args[1:], stdout, stderr)
		case "repair":
			return runRecordRepair(args[1:], stdout, stderr)
		}
	}
	fs := cli.NewFlagSet("record", "record [flags]  |  record analyze [flags] DIR  |  record repair DIR", stderr)
	config := fs.String("config", "", "YAML recorder configuration (see docs/record.md)")
	output := fs.String("dir", "", "write the timestamped recordings under `DIR` (overrides target_root)")
	period := fs.Duration("period", 100*time.Millisecond, "drain period without --config")
	duration := fs.Duration("duration", 0, "stop after this long (0: at Ctrl-C, or when --pipeline ends)")
	var tps cli.List
	fs.Var(&tps, "tracepoint", "record the Linux tracepoint CATEGORY:NAME through BPF (repeatable)")
	pipe := fs.Bool("pipeline", false, "run the instrumented example packet pipeline while recording")
	packets := fs.Int("packets", 100000, "packets the --pipeline sender sends")
	eager := fs.Bool("eager-timeout", false, "--pipeline router re-arms route timeouts on every packet (the planted cost)")
	report := cli.AddOutput(fs, "docs/record.md#dpperf-record---json")
	quiet := fs.Bool("quiet", false, "no progress on stderr")
	pos, err := cli.Parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return fail.Usagef("record: unexpected argument %q", pos[0])
	}
	if fi, err := os.Stat(report.File); err == nil && fi.IsDir() {
		return cli.UsageError(fs, "--output %s is a directory: -o/--output is the statistics' file, --dir the recordings' directory", report.File)
	}
	if !*pipe && len(tps) == 0 && *duration == 0 && *config == "" {
		return fail.Usagef("record: nothing to record: give --pipeline, --tracepoint or --config with --duration")
	}
	var cfg *record.Config
	if *config != "" {
		if cfg, err = record.LoadConfig(*config); err != nil {
			return err
		}
	} else {
		cfg, err = record.ParseConfig([]byte(fmt.Sprintf("period: %s\ndefault_policy:\n  backends: [ctf, pcapng]\n", *period)))
		if err != nil {
			return fail.Usagef("record: --period: %v", err)
		}
	}
	if *output != "" {
		cfg.TargetRoot = *output
	}
	if *duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *duration)
		defer cancel()
	}
	opts := capture.Options{Config: cfg, Tracepoints: tps}
	if *pipe {
		opts.Pipeline = &pipeline.Config{Packets: *packets, EagerTimeout: *eager}
	}
	if !*quiet {
		opts.Started = func(dir string) { fmt.Fprintf(stderr, "record: recording to %s\n", dir) }
		opts.Progress = func(p capture.Progress) {
			line := fmt.Sprintf("record: %d events, %d discarded, %d packets captured", p.Events, p.Discarded, p.Captured)
			if k := p.Kernel; k != nil {
				line += fmt.Sprintf("; kernel: %d events, %d lost", k.Events, k.Lost)
			}
			fmt.Fprintln(stderr, line)
		}
	}
	out, err := capture.Run(ctx, opts)
	if err != nil {
		return err
	}
	return report.Write(stdout, func(w io.Writer) error {
		if report.JSON {
			return cli.WriteJSON(w, out)
		}
		return writeRecordText(w, out)
	})
}

func writeRecordText(w io.Writer, out capture.Result) error {
	fmt.Fprintf(w, "recording: %s\n", out.Dir)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "component\tthread\tevents\tcaptured\tdiscarded\tfile")
	for _, s := range out.Streams {
		file := s.File
		if s.Pcapng != "" {
			file = strings.TrimPrefix(file+" "+s.Pcapng, " ")
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s\n", s.Label, s.Thread, s.Events, s.Captured, s.Discarded, file)
	}
	if k := out.Kernel; k != nil {
		rel, _ := filepath.Rel(out.Dir, k.Dir)
		fmt.Fprintf(tw, "%s\t%s\t%d\t-\t%d\t%s/cpu*\n", kernel.Label, strings.Join(k.Tracepoints, ","), k.Events, k.Lost, rel)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if p := out.Pipeline; p != nil {
		fmt.Fprintf(w, "pipeline: %d of %d packets in %v (%.0f packets/s), %d timer RPCs\n",
			p.Received, p.Sent, p.Elapsed.Round(time.Millisecond), p.PacketsPerS, p.TimerRPCs)
	}
	fmt.Fprintf(w, "analyze with: dpperf trace %s\n", out.Dir)
	return nil
}

func runRecordRepair(args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("record repair", "record repair [--json] DIR", stderr)
	out := cli.AddOutput(fs, "docs/cli.md#small-json-forms")
	pos, err := cli.Parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return fail.Usagef("record repair: want one recording directory")
	}
	if fi, err := os.Stat(pos[0]); err != nil || !fi.IsDir() {
		return fail.Inputf(pos[0], "not a recording directory")
	}
	cut, err := record.Repair(pos[0])
	if err != nil {
		return fail.Input("", fmt.Errorf("record repair: %w", err))
	}
	return out.Write(stdout, func(w io.Writer) error {
		if out.JSON {
			return json.NewEncoder(w).Encode(struct {
				Schema string   `json:"schema"`
				Cut    []string `json:"cut"`
			}{"dpperf.record.repair/v1", append([]string{}, cut...)})
		}
		for _, c := range cut {
			fmt.Fprintf(w, "cut %s to its last whole packet\n", c)
		}
		if len(cut) == 0 {
			fmt.Fprintln(w, "nothing to repair")
		}
		return nil
	})
}
