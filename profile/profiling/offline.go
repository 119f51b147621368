package profiling

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/dpperf/dpperf/internal/fail"
	"github.com/dpperf/dpperf/profile/analyze"
	"github.com/dpperf/dpperf/profile/path"
)

// Offline is an analysis of recorded traces: trace text files (ftrace,
// trace-cmd report, .gz accepted) or one CTF recording of dpperf record.
type Offline struct {
	*Setup
	Inputs []string // the text files, or one recording directory
	// Target, when set, is the target host's recording: Inputs are then
	// the initiator's, and the two are joined (see runHosts).
	Target []string
	Notes  io.Writer // where the spill file is named
	// OnInterval, for an online task, gets the profile of each interval.
	OnInterval func(*analyze.Profile)
}

// Run reads the inputs to the end (or until ctx ends: the profile is then
// partial and says so) and returns their profile.
func (o *Offline) Run(ctx context.Context) (*analyze.Profile, error) {
	if len(o.Target) > 0 {
		return o.runHosts(ctx)
	}
	opt := o.options(o.OnInterval)
	spill, finishSpill, err := o.openSpill(o.Notes)
	if err != nil {
		return nil, err
	}
	opt.Spill = spill
	src, err := openTraceInput(o.Inputs, o.Path)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	agg, stats, err := analyze.Run(ctx, src, opt)
	if err != nil {
		return nil, fail.Input(src.Current(), err)
	}
	if err := finishSpill(); err != nil {
		return nil, err
	}
	prof := o.summarize(agg, strings.Join(o.Inputs, ","))
	lost := src.Lost()
	prof.Counts = analyze.Counts{BuildStats: stats, Lost: lost, Analyzed: agg.Records()}
	for i, e := range o.Path.Events {
		info := analyze.EventInfo{Name: e.Name, Probe: probeName(&e), Observed: src.Seen()[i]}
		if !info.Observed {
			info.Reason = "not in the trace"
		}
		prof.Events = append(prof.Events, info)
	}
	prof.SetEventCounts()
	if lost > 0 {
		prof.Warnings = append(prof.Warnings, fmt.Sprintf("the kernel lost %d events; some requests are missing or merged", lost))
	}
	if ctx.Err() != nil {
		prof.Warnings = append(prof.Warnings, "interrupted: partial profile")
	}
	return prof, nil
}

func probeName(e *path.Event) string {
	if e.Tracepoint != "" {
		return e.Tracepoint
	}
	return "kprobe:" + e.Kprobe
}
