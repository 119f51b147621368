package main

import (
	"context"
	"io"

	"github.com/dpperf/dpperf/internal/cli"
	"github.com/dpperf/dpperf/internal/fail"
	"github.com/dpperf/dpperf/profile/profiling"
)

func runProfileAnalyze(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	pf := newProfileFlags("profile analyze", "profile analyze [flags] TRACE... | RECORDING-DIR", stderr)
	var inputs cli.List
	pf.fs.Var(&inputs, "input", "CTF recording directory of dpperf record --tracepoint, or trace text `FILE` (same as giving it as the argument); twice: the initiator's, then the target's recording of two hosts")
	files, err := pf.parse(args)
	if err != nil {
		return err
	}
	var target []string
	switch {
	case len(inputs) == 2 && len(files) == 0:
		files, target = inputs[:1], inputs[1:]
	case len(inputs) > 2 || len(inputs) == 2:
		return fail.Usagef("profile analyze: --input twice names the initiator's and the target's recordings, and nothing else")
	default:
		files = append(files, inputs...)
	}
	if len(files) == 0 {
		return fail.Usagef("profile analyze: no trace file or recording given")
	}
	s, err := pf.tf.load()
	if err != nil {
		return err
	}
	a := profiling.Offline{Setup: s, Inputs: files, Target: target, Notes: stderr, OnInterval: intervalReport(stdout, "avg", "p50", "p99")}
	prof, err := a.Run(ctx)
	if err != nil {
		return err
	}
	return emit(prof, s.Task, &pf.out, stdout)
}
