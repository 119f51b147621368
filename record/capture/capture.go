package capture

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/dpperf/dpperf/internal/fail"
	"github.com/dpperf/dpperf/record"
	"github.com/dpperf/dpperf/record/kernel"
	"github.com/dpperf/dpperf/record/pipeline"
	"github.com/dpperf/dpperf/record/trace"
)

// Options say what one recording records.
type Options struct {
	Config      *record.Config // the recorder's policies, periods and root directory
	Tracepoints []string       // kernel tracepoints (CATEGORY:NAME) to record through BPF
	Pipeline    *pipeline.Config

	// Started, if set, is called with the recording's directory once the
	// recorder runs.
	Started func(dir string)
	// Progress, if set, is called about once a second with what has been
	// recorded so far.
	Progress func(Progress)
}

// Progress is a recording's running count.
type Progress struct {
	Events, Discarded, Captured uint64 // user-space streams
	Kernel                      *kernel.Stats
}

// Result is the JSON printed by `dpperf record --json`.
type Result struct {
	record.Stats
	Kernel   *kernel.Stats    `json:"kernel,omitempty"`
	Pipeline *pipeline.Result `json:"pipeline,omitempty"`
}

// Run records until ctx is done or, with a pipeline, until the pipeline
// has sent its packets. Bad tracepoint names are usage errors.
func Run(ctx context.Context, o Options) (Result, error) {
	var kern *kernel.Recorder
	if len(o.Tracepoints) > 0 {
		var err error
		if kern, err = kernel.Open(o.Tracepoints); err != nil {
			return Result{}, fail.Usagef("record: --tracepoint: %v", err)
		}
		defer kern.Stop()
	}
	tr := trace.New()
	rec := record.New(tr, o.Config, nil)
	dir, err := rec.Enable()
	if err != nil {
		_, _ = rec.Disable()
		return Result{}, fmt.Errorf("record: %w", err)
	}
	if o.Started != nil {
		o.Started(dir)
	}
	loopCtx, stopLoop := context.WithCancel(context.Background())
	loopErr := make(chan error, 1)
	go func() { loopErr <- rec.Loop(loopCtx) }()
	if kern != nil {
		uuid, off := rec.Clock()
		err := kern.Start(kernel.Options{Dir: filepath.Join(dir, kernel.Label), Period: time.Duration(o.Config.Period), ClockUUID: uuid, ClockOffsetNs: off})
		if err != nil {
			stopLoop()
			<-loopErr
			_, _ = rec.Disable()
			return Result{}, fmt.Errorf("record: kernel tracepoints: %w", err)
		}
	}
	progressDone := make(chan struct{})
	if o.Progress != nil {
		go report(ctx, rec, kern, o.Progress, progressDone)
	}
	var out Result
	var runErr error
	if o.Pipeline != nil {
		res, err := pipeline.Run(ctx, tr, *o.Pipeline)
		out.Pipeline, runErr = &res, err
	} else {
		<-ctx.Done()
	}
	close(progressDone)
	var kerr error
	if kern != nil {
		st, err := kern.Stop()
		out.Kernel, kerr = &st, err
	}
	stopLoop()
	lerr := <-loopErr
	st, derr := rec.Disable()
	out.Stats = st
	if st.Dir == "" {
		out.Stats.Dir = dir
	}
	if err := errors.Join(runErr, kerr, lerr, derr); err != nil {
		return out, fmt.Errorf("record: %w", err)
	}
	return out, nil
}

// report calls f once a second until done is closed or ctx is done.
func report(ctx context.Context, rec *record.Recorder, kern *kernel.Recorder, f func(Progress), done chan struct{}) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return
		case <-ctx.Done():
			return
		case <-tick.C:
			var p Progress
			for _, s := range rec.Stats().Streams {
				p.Events, p.Discarded, p.Captured = p.Events+s.Events, p.Discarded+s.Discarded, p.Captured+s.Captured
			}
			if kern != nil {
				st := kern.Snapshot()
				p.Kernel = &st
			}
			f(p)
		}
	}
}
