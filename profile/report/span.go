package report

import (
	"github.com/dpperf/dpperf/profile/analyze"
	"github.com/dpperf/dpperf/profile/path"
)

// The latency of a whole request, as a profile measures it, runs from the
// path's first event to its last: on the block path Q→C (btt's Q2C), from
// the bio entering the block layer (block_bio_queue) to the request's
// completion (block_rq_complete). It leaves out what happens before the
// block layer and after completion, which fio's clat includes (submission
// through the system call, reaping the completion): see docs/profile.md.

// spanName names the span from the first to the last of events: "Q→C".
func spanName(events []string) string {
	if len(events) < 2 {
		return "total"
	}
	return events[0] + "→" + events[len(events)-1]
}

// profileSpan names the whole-request span of a profile by its events.
func profileSpan(p *analyze.Profile) string {
	names := make([]string, len(p.Events))
	for i, e := range p.Events {
		names[i] = e.Name
	}
	return spanName(names)
}

// pathSpan names the whole-request span of a path.
func pathSpan(p *path.Path) string {
	names := make([]string, len(p.Events))
	for i, e := range p.Events {
		names[i] = e.Name
	}
	return spanName(names)
}
