package analyze

import (
	"fmt"
	"sort"
	"strings"

	"github.com/dpperf/dpperf/profile/path"
)

// Schema identifies the JSON form of a Profile (see profile/report/schema.md).
const Schema = "dpperf.profile/v1"

// Percentiles reported for every distribution, as in the original profiler.
var Percentiles = []float64{10, 50, 70, 80, 90, 95, 99, 99.9}

// Profile is the result of analyzing one trace or one collection run.
type Profile struct {
	Schema  string   `json:"schema"`
	Path    string   `json:"path"`
	Source  string   `json:"source"`
	Filter  string   `json:"filter"`
	Sample  uint32   `json:"sample"`
	GroupBy []string `json:"group_by"`
	// Contents lists the report parts present (task report.contents);
	// absent: all of them.
	Contents Contents    `json:"contents,omitempty"`
	Window   Window      `json:"window"`
	Events   []EventInfo `json:"events"`
	Counts   Counts      `json:"counts"`
	Groups   []Group     `json:"groups"`
	Warnings []string    `json:"warnings,omitempty"`
	// Collector is the kernel-side cost of the BPF collector, when measured.
	Collector *CollectorCost `json:"collector,omitempty"`
	// Hosts is set when the initiator and the target were recorded on
	// hosts of their own and joined.
	Hosts *Hosts `json:"hosts,omitempty"`
}

// CollectorCost is the run time of the collector's BPF programs as the
// kernel's statistics count it.
type CollectorCost struct {
	Runs       uint64  `json:"runs"`
	TotalNS    int64   `json:"total_ns"`
	NSPerRun   float64 `json:"ns_per_run"`
	NSPerReq   float64 `json:"ns_per_request"` // per complete record
	CPUPercent float64 `json:"cpu_percent"`    // of one CPU over the window
	// Programs splits the cost by program (tracepoint), in path order.
	Programs []ProgramCost `json:"programs,omitempty"`
}

// ProgramCost is the run time of one BPF program of the collector.
type ProgramCost struct {
	Name     string  `json:"name"`
	Runs     uint64  `json:"runs"`
	NSPerRun float64 `json:"ns_per_run"`
}

// Window is the time span covered by the records.
type Window struct {
	StartNS int64   `json:"start_ns"`
	EndNS   int64   `json:"end_ns"`
	Seconds float64 `json:"seconds"`
}

// EventInfo says whether a path event was observed and, if not, why.
type EventInfo struct {
	Name     string `json:"name"`
	Probe    string `json:"probe"`
	Observed bool   `json:"observed"` // attached (live) or present (trace file)
	Count    int64  `json:"count"`    // events received
	Reason   string `json:"reason,omitempty"`
}

// SetEventCounts fills EventInfo.Count from the build statistics and
// explains events that were attached but never fired.
func (p *Profile) SetEventCounts() {
	for i := range p.Events {
		if i < len(p.Counts.PerEvent) {
			p.Events[i].Count = p.Counts.PerEvent[i]
		}
		if e := &p.Events[i]; e.Observed && e.Count == 0 {
			e.Reason = "attached but never fired for the profiled requests"
		}
	}
}

// Counts are the bookkeeping totals of the run.
type Counts struct {
	BuildStats
	Lost     int64 `json:"lost"`     // events lost by the kernel buffer
	Analyzed int64 `json:"analyzed"` // records that passed filter and sampling
}

// Group is the profile of one group of requests.
type Group struct {
	Key       string  `json:"key"`
	Op        string  `json:"op,omitempty"`
	Bytes     uint32  `json:"bytes,omitempty"`
	Dev       string  `json:"dev,omitempty"`
	CPU       *uint16 `json:"cpu,omitempty"`
	Requests  uint64  `json:"requests"`
	IOPS      float64 `json:"iops,omitzero"`
	MBps      float64 `json:"mbps,omitzero"`
	Latency   Dist    `json:"latency,omitzero"`
	Stages    []Stage `json:"stages,omitempty"`
	Occupancy float64 `json:"occupancy,omitzero"`
	// Distribution is the end-to-end latency histogram in power-of-two
	// buckets (the DIST aggregator).
	Distribution []Bucket `json:"distribution,omitempty"`
}

// Bucket counts the requests whose latency is below LessNS and at least
// half of it (the first bucket starts at 0).
type Bucket struct {
	LessNS int64  `json:"less_ns"`
	Count  uint64 `json:"count"`
}

// log2Buckets folds h into power-of-two buckets from the smallest to the
// largest non-empty one. A histogram bucket that straddles a power of two
// counts in the upper one.
func log2Buckets(h *Hist) []Bucket {
	var out []Bucket
	h.Buckets(func(upper int64, count uint64) {
		less := int64(1)
		for less < upper {
			less <<= 1
		}
		if n := len(out); n > 0 && out[n-1].LessNS == less {
			out[n-1].Count += count
			return
		}
		for n := len(out); n > 0 && out[n-1].LessNS*2 < less; n = len(out) {
			out = append(out, Bucket{LessNS: out[n-1].LessNS * 2})
		}
		out = append(out, Bucket{LessNS: less, Count: count})
	})
	return out
}

// Stage is one stage of a group's breakdown. A merged stage spans events
// that were not observed in between; Covers names the path stages in it.
type Stage struct {
	Name        string   `json:"name"`
	Covers      []string `json:"covers"`
	Merged      bool     `json:"merged"`
	Queue       string   `json:"queue"`
	Cause       string   `json:"cause"`
	Latency     Dist     `json:"latency"`
	Share       float64  `json:"share"`                 // fraction of the summed end-to-end time
	ArrivalRate float64  `json:"arrival_rate,omitzero"` // requests/s entering the stage
	Occupancy   float64  `json:"occupancy,omitzero"`    // mean requests in the stage (Little's law)
	// ClockBoundNS, on a stage that crosses hosts, bounds the error of
	// each of its times that the clock estimate may add (Hosts.Clock).
	ClockBoundNS float64 `json:"clock_bound_ns,omitzero"`
}

// Dist summarises a latency distribution in ns.
type Dist struct {
	Count       uint64       `json:"count"`
	MinNS       int64        `json:"min_ns"`
	MeanNS      float64      `json:"mean_ns"`
	MaxNS       int64        `json:"max_ns"`
	Percentiles []Percentile `json:"percentiles"`
}

// Percentile is one point of a distribution.
type Percentile struct {
	P  float64 `json:"p"`
	NS int64   `json:"ns"`
}

// P returns percentile p, or -1 when not reported.
func (d *Dist) P(p float64) int64 {
	for _, x := range d.Percentiles {
		if x.P == p {
			return x.NS
		}
	}
	return -1
}

func distOf(h *Hist) Dist {
	d := Dist{Count: h.Count(), MinNS: h.Min(), MeanNS: h.Mean(), MaxNS: h.Max()}
	for _, p := range Percentiles {
		d.Percentiles = append(d.Percentiles, Percentile{p, h.Quantile(p / 100)})
	}
	return d
}

// Summarize turns an aggregator into a Profile. scale is the sampling
// factor used to estimate rates (1 when every request was kept).
func Summarize(a *Aggregator, p *path.Path, scale uint32) *Profile {
	scale = max(scale, 1)
	pr := &Profile{Schema: Schema, Path: p.Name, Sample: scale}
	pr.Window = Window{StartNS: a.first, EndNS: a.last, Seconds: float64(a.last-a.first) / 1e9}
	secs := pr.Window.Seconds
	for k, g := range a.groups {
		out := Group{Requests: g.total.Count(), Latency: distOf(&g.total), Key: a.label(k), Distribution: log2Buckets(&g.total)}
		if a.by.Type {
			out.Op = k.op.String()
		}
		if a.by.Size {
			out.Bytes = k.bytes
		}
		if a.by.Session {
			out.Dev = k.dev.String()
		}
		if a.by.CPU {
			c := k.cpu
			out.CPU = &c
		}
		if secs > 0 {
			out.IOPS = float64(out.Requests) * float64(scale) / secs
			out.MBps = float64(g.bytes) * float64(scale) / secs / 1e6
			out.Occupancy = g.total.Sum() * float64(scale) / (secs * 1e9)
		}
		for idx, h := range g.stages {
			if h == nil {
				continue
			}
			from, to := idx/path.MaxEvents, idx%path.MaxEvents
			st := Stage{Name: p.MergedName(from, to), Merged: to-from > 1, Latency: distOf(h)}
			st.Queue, st.Cause = string(p.Stages[from].Queue), string(p.Stages[from].Cause)
			for i := from; i < to; i++ {
				st.Covers = append(st.Covers, p.Stages[i].Name)
			}
			if to-from > 1 {
				// A merged stage is as congested as its worst member could be;
				// name the cause of the member that sits last (closest to
				// the device) unless all agree.
				st.Queue, st.Cause = mergedClass(p, from, to)
			}
			if tot := g.total.Sum(); tot > 0 {
				st.Share = h.Sum() / tot
			}
			if secs > 0 {
				st.ArrivalRate = float64(h.Count()) * float64(scale) / secs
				st.Occupancy = h.Sum() * float64(scale) / (secs * 1e9)
			}
			out.Stages = append(out.Stages, st)
		}
		pr.Groups = append(pr.Groups, out)
	}
	sort.Slice(pr.Groups, func(i, j int) bool {
		if pr.Groups[i].Requests != pr.Groups[j].Requests {
			return pr.Groups[i].Requests > pr.Groups[j].Requests
		}
		return pr.Groups[i].Key < pr.Groups[j].Key
	})
	return pr
}

// mergedClass picks the queueing and cause class of a merged stage: the
// common class if all members agree, else the one of the last member.
func mergedClass(p *path.Path, from, to int) (string, string) {
	q, c := p.Stages[from].Queue, p.Stages[from].Cause
	for i := from + 1; i < to; i++ {
		if p.Stages[i].Queue != q || p.Stages[i].Cause != c {
			return string(p.Stages[to-1].Queue), string(p.Stages[to-1].Cause)
		}
	}
	return string(q), string(c)
}

// FormatBytes prints a request size the way fio and the task files write
// it: 4KiB, 128KiB, 1MiB, or bytes when not a whole KiB.
func FormatBytes(b uint64) string {
	switch {
	case b == 0:
		return "0B"
	case b%(1<<20) == 0:
		return fmt.Sprintf("%dMiB", b>>20)
	case b%(1<<10) == 0:
		return fmt.Sprintf("%dKiB", b>>10)
	}
	return fmt.Sprintf("%dB", b)
}

// label names a group: "read 4KiB", "write 128KiB dev 7,0", "all".
func (a *Aggregator) label(k groupKey) string {
	var parts []string
	if a.by.Type {
		parts = append(parts, k.op.String())
	}
	if a.by.Size {
		parts = append(parts, FormatBytes(uint64(k.bytes)))
	}
	if a.by.Session {
		parts = append(parts, "dev "+k.dev.String())
	}
	if a.by.CPU {
		parts = append(parts, fmt.Sprintf("cpu %d", k.cpu))
	}
	if len(parts) == 0 {
		return "all"
	}
	return strings.Join(parts, " ")
}

// Each calls fn for every group's end-to-end histogram (stage "") and
// stage histograms, in a stable order.
func (a *Aggregator) Each(p *path.Path, fn func(group, stage string, h *Hist)) {
	keys := make([]groupKey, 0, len(a.groups))
	for k := range a.groups {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return a.label(keys[i]) < a.label(keys[j]) })
	for _, k := range keys {
		g := a.groups[k]
		label := a.label(k)
		fn(label, "", &g.total)
		for idx, h := range g.stages {
			if h != nil {
				fn(label, p.MergedName(idx/path.MaxEvents, idx%path.MaxEvents), h)
			}
		}
	}
}
