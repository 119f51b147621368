package hostjoin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/dpperf/dpperf/profile/analyze"
	"github.com/dpperf/dpperf/profile/event"
	"github.com/dpperf/dpperf/profile/path"
)

// Read drains src; with keep set, only the events of the kinds it marks.
func Read(ctx context.Context, src analyze.Source, keep func(kind int) bool) ([]event.Event, error) {
	var evs []event.Event
	for i := 0; ; i++ {
		if i&4095 == 0 && ctx.Err() != nil {
			return evs, nil
		}
		ev, err := src.Next()
		if errors.Is(err, io.EOF) {
			return evs, nil
		}
		if err != nil {
			return evs, err
		}
		if keep == nil || keep(int(ev.Kind)) {
			evs = append(evs, ev)
		}
	}
}

// Initiator keeps the initiator's events.
func (s Sides) Initiator(kind int) bool { return kind < event.MaxEvents && !s.Target[kind] }

// Target keeps the target's events.
func (s Sides) TargetKind(kind int) bool { return kind < event.MaxEvents && s.Target[kind] }

// Records builds the initiator's records from its events, as the
// analysis does on one host; the target's events of the path simply
// never arrive.
func Records(evs []event.Event, opt analyze.Options) ([]event.Record, analyze.BuildStats) {
	b := analyze.NewBuilder(opt.Path, nil, opt.MaxOpen)
	var out []event.Record
	for _, ev := range evs {
		if r := b.Add(ev); r != nil {
			out = append(out, *r)
		}
	}
	return out, b.Stats()
}

// Analyze joins the initiator's events with the target's (nil when the
// target's could not be had: partial then says why) and aggregates the
// joined requests. Without joins the initiator's requests are analyzed
// alone and the report says the target's stages are partial.
func (s Sides) Analyze(ctx context.Context, initEvs, targetEvs []event.Event, partial string, opt analyze.Options, jopt Options) (*analyze.Aggregator, analyze.BuildStats, *analyze.Hosts, error) {
	recs, stats := Records(initEvs, opt)
	halves, incomplete := s.Halves(targetEvs)
	res := s.Join(recs, halves, incomplete, jopt)
	for _, ev := range targetEvs {
		if k := int(ev.Kind); k < len(stats.PerEvent) {
			stats.PerEvent[k]++
			stats.Events++
		}
	}
	hosts := res.Hosts
	hosts.Partial = partial
	use := res.Joined
	if len(use) == 0 {
		use = res.Unjoined
		if hosts.Partial == "" {
			hosts.Partial = "no request of the target joined the initiator's"
		}
	}
	agg, _, err := analyze.Run(ctx, &recordSlice{recs: use}, opt)
	if err != nil {
		return nil, stats, nil, err
	}
	return agg, stats, &hosts, nil
}

// Annotate adds what a two-host profile carries: the hosts section, the
// clock's error bound on the stages that cross hosts, and a warning for
// a partial target side or unjoined requests.
func Annotate(prof *analyze.Profile, hosts *analyze.Hosts, p *path.Path) {
	crossing := map[string]bool{}
	for _, st := range p.Stages {
		crossing[st.Name] = st.Side == "both"
	}
	prof.Hosts = hosts
	if hosts.Partial != "" {
		prof.Warnings = append(prof.Warnings, "target's stages partial: "+hosts.Partial)
	}
	var un []string
	for _, u := range hosts.Join.Unjoined {
		un = append(un, fmt.Sprintf("%d %s (%s)", u.Count, u.Side, u.Reason))
	}
	if len(un) > 0 {
		prof.Warnings = append(prof.Warnings, "unjoined requests: "+strings.Join(un, "; "))
	}
	if hosts.Clock == nil {
		return
	}
	for gi := range prof.Groups {
		for si := range prof.Groups[gi].Stages {
			st := &prof.Groups[gi].Stages[si]
			for _, c := range st.Covers {
				if crossing[c] {
					st.ClockBoundNS = hosts.Clock.ErrorBoundNS
				}
			}
		}
	}
}

// recordSlice hands joined records to the analysis.
type recordSlice struct {
	recs []event.Record
	i    int
}

func (r *recordSlice) Next() (event.Event, error) { return event.Event{}, io.EOF }

func (r *recordSlice) NextRecord(rec *event.Record) error {
	if r.i >= len(r.recs) {
		return io.EOF
	}
	*rec = r.recs[r.i]
	r.i++
	return nil
}

// RecordsOf turns target halves into records (target events only), for
// the target host's own profile of its stages.
func RecordsOf(halves []Half) analyze.Source {
	recs := make([]event.Record, len(halves))
	for i, h := range halves {
		recs[i] = event.Record{TS: h.TS, QID: h.QID, CID: h.CID}
	}
	return &recordSlice{recs: recs}
}
