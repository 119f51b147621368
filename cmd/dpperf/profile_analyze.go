package main

import (
	"context"
	"io"

	"github.com/dpperf/dpperf/internal/fail"
	"github.com/dpperf/dpperf/profile/profiling"
)

func runProfileAnalyze(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	pf := newProfileFlags("profile analyze", "profile analyze [flags] TRACE... | RECORDING-DIR", stderr)
	input := pf.fs.String("input", "", "CTF recording directory of dpperf record --tracepoint (same as giving it as the argument)")
	files, err := pf.parse(args)
	if err != nil {
		return err
	}
	if *input != "" {
		files = append(files, *input)
	}
	if len(files) == 0 {
		return fail.Usagef("profile analyze: no trace file or recording given")
	}
	s, err := pf.tf.load()
	if err != nil {
		return err
	}
	a := profiling.Offline{Setup: s, Inputs: files, Notes: stderr, OnInterval: intervalReport(stdout, "avg", "p50", "p99")}
	prof, err := a.Run(ctx)
	if err != nil {
		return err
	}
	return emit(prof, s.Task, &pf.out, stdout)
}
