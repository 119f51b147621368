package profiling

import (
	"context"
	"fmt"

	"github.com/dpperf/dpperf/internal/fail"
	"github.com/dpperf/dpperf/profile/analyze"
	"github.com/dpperf/dpperf/profile/event"
	"github.com/dpperf/dpperf/profile/hostjoin"
)

// runHosts is Run for two recordings, the initiator's (Inputs) and the
// target's (Target), each on its own clock: it joins them into whole
// requests (profile/hostjoin) and profiles those.
func (o *Offline) runHosts(ctx context.Context) (*analyze.Profile, error) {
	sides, err := hostjoin.SidesOf(o.Path)
	if err != nil {
		return nil, fail.Usagef("profile analyze: two inputs: %v", err)
	}
	initEvs, initSeen, initLost, err := readSide(ctx, o.Inputs, o, sides.Initiator)
	if err != nil {
		return nil, err
	}
	tgtEvs, tgtSeen, tgtLost, err := readSide(ctx, o.Target, o, sides.TargetKind)
	if err != nil {
		return nil, err
	}
	agg, stats, hosts, err := sides.Analyze(ctx, initEvs, tgtEvs, "", o.options(nil), hostjoin.Options{})
	if err != nil {
		return nil, err
	}
	prof := o.summarize(agg, fmt.Sprintf("initiator %s, target %s", o.Inputs[0], o.Target[0]))
	prof.Counts = analyze.Counts{BuildStats: stats, Lost: initLost + tgtLost, Analyzed: agg.Records()}
	for i, e := range o.Path.Events {
		seen, where := initSeen[i], "initiator's"
		if sides.Target[i] {
			seen, where = tgtSeen[i], "target's"
		}
		info := analyze.EventInfo{Name: e.Name, Probe: probeName(&e), Observed: seen}
		if !seen {
			info.Reason = "not in the " + where + " trace"
		}
		prof.Events = append(prof.Events, info)
	}
	prof.SetEventCounts()
	hostjoin.Annotate(prof, hosts, o.Path)
	if lost := initLost + tgtLost; lost > 0 {
		prof.Warnings = append(prof.Warnings, fmt.Sprintf("the kernels lost %d events; some requests are missing", lost))
	}
	if ctx.Err() != nil {
		prof.Warnings = append(prof.Warnings, "interrupted: partial profile")
	}
	return prof, nil
}

// readSide reads one host's recording, keeping the events keep accepts.
func readSide(ctx context.Context, names []string, o *Offline, keep func(int) bool) ([]event.Event, []bool, int64, error) {
	src, err := openTraceInput(names, o.Path)
	if err != nil {
		return nil, nil, 0, err
	}
	defer src.Close()
	evs, err := hostjoin.Read(ctx, src, keep)
	if err != nil {
		return nil, nil, 0, fail.Input(src.Current(), err)
	}
	return evs, src.Seen(), src.Lost(), nil
}
