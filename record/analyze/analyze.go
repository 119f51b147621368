package analyze

import (
	"sort"

	"github.com/dpperf/dpperf/record/ctf"
)

// Reports is the JSON of `dpperf trace --json` over several recordings
// (docs/record.md): one Report each, in the order given.
type Reports struct {
	Schema     string    `json:"schema"`
	Recordings []*Report `json:"recordings"`
}

// Report is the result of Analyze; docs/record.md documents its JSON form.
type Report struct {
	Dir         string         `json:"dir"`
	Streams     []StreamStats  `json:"streams"`
	Checkpoints []Durations    `json:"checkpoints"`
	RPCs        []RPCLatency   `json:"rpcs"`
	Threads     []ThreadStates `json:"threads"`
	Queues      []QueueFill    `json:"queues"`
	Warnings    []string       `json:"warnings"`
}

// Durations are the times between START and END checkpoints of one name
// in one component, over all of its threads.
type Durations struct {
	Label    string `json:"label"`
	Name     string `json:"name"`
	Unpaired uint64 `json:"unpaired"` // END without START, or START never ended
	Summary
}

// RPCLatency is the round trip of one RPC from a caller component to a
// callee (Rpc_call to Rpc_returned on the calling thread).
type RPCLatency struct {
	Caller string `json:"caller"`
	Callee string `json:"callee"`
	Name   string `json:"name"`
	Summary
}

// Thread states derived from RPC events.
const (
	StateReady         = "ready"          // running its own work
	StateAwaitingReply = "awaiting_reply" // blocked in an RPC it called
	StateAwaitingRPC   = "awaiting_rpc"   // a server waiting for the next call
)

// ThreadStates is the time one thread spent in each state, from its first
// RPC event to its last event, and the intervals themselves.
type ThreadStates struct {
	Label     string            `json:"label"`
	Thread    string            `json:"thread"`
	TimeNs    map[string]uint64 `json:"time_ns"`
	Intervals []Interval        `json:"intervals"`
}

// Interval is one stretch of a thread in a state.
type Interval struct {
	State string `json:"state"`
	Begin uint64 `json:"begin_ns"`
	End   uint64 `json:"end_ns"`
}

// QueueFill summarises the fill samples of one queue.
type QueueFill struct {
	Label    string  `json:"label"`
	Name     string  `json:"name"`
	Capacity uint32  `json:"capacity"` // largest capacity sampled
	Samples  uint64  `json:"samples"`
	Mean     float64 `json:"mean_used"`
	Min      uint32  `json:"min_used"`
	Max      uint32  `json:"max_used"`
	Empty    float64 `json:"empty_share"` // share of samples with used = 0
	Full     float64 `json:"full_share"`  // share of samples with used = capacity
	// Histogram counts the samples in 10 bins of used/capacity: bin i holds
	// [i/10, (i+1)/10), the last one including 1.
	Histogram [10]uint64 `json:"histogram"`
	// Timeline has the mean fill in each of up to 20 equal spans of time.
	Timeline []FillPoint `json:"timeline"`
}

// FillPoint is the mean fill of a queue in [Begin, End).
type FillPoint struct {
	Begin   uint64  `json:"begin_ns"`
	End     uint64  `json:"end_ns"`
	Samples uint64  `json:"samples"`
	Mean    float64 `json:"mean_used"`
}

type key2 struct{ a, b string }
type key3 struct{ a, b, c string }

// analyzer is the Visitor computing a Report.
type analyzer struct {
	open      map[key3][]uint64 // (stream, name) → START timestamps
	durations map[key2][]uint64
	unpaired  map[key2]uint64
	calls     map[key3][]uint64 // (stream, peer, name) → call timestamps
	rtt       map[key3][]uint64
	threads   map[string]*ThreadStates
	state     map[string]*Interval
	queues    map[key2]*queueSamples
}

type queueSamples struct {
	cap uint32
	ts  []uint64
	use []uint32
}

func newAnalyzer() *analyzer {
	return &analyzer{open: map[key3][]uint64{}, durations: map[key2][]uint64{}, unpaired: map[key2]uint64{},
		calls: map[key3][]uint64{}, rtt: map[key3][]uint64{}, threads: map[string]*ThreadStates{},
		state: map[string]*Interval{}, queues: map[key2]*queueSamples{}}
}

func str(ev *ctf.Event, name string) string { v, _ := ev.Field(name); return v.Str }
func num(ev *ctf.Event, name string) uint64 { v, _ := ev.Field(name); return v.Uint }

func (a *analyzer) Event(s *StreamRef, ev *ctf.Event) {
	ts := ev.Timestamp
	switch ev.Class.ID {
	case ctf.IDCheckpoint:
		name := str(ev, "name")
		k := key3{s.Path, name, ""}
		d := key2{s.Label, name}
		switch num(ev, "type") {
		case ctf.CheckpointStart:
			a.open[k] = append(a.open[k], ts)
		case ctf.CheckpointEnd:
			st := a.open[k]
			if len(st) == 0 {
				a.unpaired[d]++
				return
			}
			a.durations[d] = append(a.durations[d], ts-st[len(st)-1])
			a.open[k] = st[:len(st)-1]
		}
	case ctf.IDRpcCall, ctf.IDRpcReturned, ctf.IDRpcDispatch, ctf.IDRpcReply:
		peer, name := str(ev, "peer"), str(ev, "name")
		k := key3{s.Path, peer, name}
		switch ev.Class.ID {
		case ctf.IDRpcCall:
			a.calls[k] = append(a.calls[k], ts)
			a.setState(s, StateAwaitingReply, ts)
		case ctf.IDRpcReturned:
			if c := a.calls[k]; len(c) > 0 {
				a.rtt[key3{s.Label, peer, name}] = append(a.rtt[key3{s.Label, peer, name}], ts-c[len(c)-1])
				a.calls[k] = c[:len(c)-1]
			}
			a.setState(s, StateReady, ts)
		case ctf.IDRpcDispatch:
			a.setState(s, StateReady, ts)
		case ctf.IDRpcReply:
			a.setState(s, StateAwaitingRPC, ts)
		}
	case ctf.IDQueueFill:
		k := key2{s.Label, str(ev, "name")}
		q := a.queues[k]
		if q == nil {
			q = &queueSamples{}
			a.queues[k] = q
		}
		used, c := uint32(num(ev, "used")), uint32(num(ev, "capacity"))
		q.cap = max(q.cap, c)
		q.ts = append(q.ts, ts)
		q.use = append(q.use, used)
	}
	if cur := a.state[s.Path]; cur != nil {
		cur.End = ts
	}
}

// setState closes the current interval of the thread and opens another.
func (a *analyzer) setState(s *StreamRef, state string, ts uint64) {
	th := a.threads[s.Path]
	if th == nil {
		th = &ThreadStates{Label: s.Label, Thread: s.Thread, TimeNs: map[string]uint64{}}
		a.threads[s.Path] = th
	}
	if cur := a.state[s.Path]; cur != nil {
		cur.End = ts
		th.TimeNs[cur.State] += cur.End - cur.Begin
		th.Intervals = append(th.Intervals, *cur)
	}
	a.state[s.Path] = &Interval{State: state, Begin: ts, End: ts}
}

// Analyze reads the recording in dir and computes its report.
func Analyze(dir string) (*Report, error) {
	a := newAnalyzer()
	streams, warnings, err := Walk(dir, a)
	if err != nil {
		return nil, err
	}
	r := &Report{Dir: dir, Streams: streams, Warnings: warnings,
		Checkpoints: []Durations{}, RPCs: []RPCLatency{}, Threads: []ThreadStates{}, Queues: []QueueFill{}}
	if r.Warnings == nil {
		r.Warnings = []string{}
	}
	for k, st := range a.open {
		for range st {
			var label string
			for _, s := range streams {
				if s.Path == k.a {
					label = s.Label
				}
			}
			a.unpaired[key2{label, k.b}]++
		}
	}
	seen := map[key2]bool{}
	for k, d := range a.durations {
		seen[k] = true
		r.Checkpoints = append(r.Checkpoints, Durations{Label: k.a, Name: k.b, Unpaired: a.unpaired[k], Summary: Summarize(d)})
	}
	for k, n := range a.unpaired {
		if !seen[k] {
			r.Checkpoints = append(r.Checkpoints, Durations{Label: k.a, Name: k.b, Unpaired: n})
		}
	}
	sort.Slice(r.Checkpoints, func(i, j int) bool {
		x, y := r.Checkpoints[i], r.Checkpoints[j]
		if x.Total != y.Total {
			return x.Total > y.Total
		}
		return x.Label+"\x00"+x.Name < y.Label+"\x00"+y.Name
	})
	for k, d := range a.rtt {
		r.RPCs = append(r.RPCs, RPCLatency{Caller: k.a, Callee: k.b, Name: k.c, Summary: Summarize(d)})
	}
	sort.Slice(r.RPCs, func(i, j int) bool {
		x, y := r.RPCs[i], r.RPCs[j]
		if x.Total != y.Total {
			return x.Total > y.Total
		}
		return x.Caller+"\x00"+x.Callee+"\x00"+x.Name < y.Caller+"\x00"+y.Callee+"\x00"+y.Name
	})
	for path, th := range a.threads {
		if cur := a.state[path]; cur != nil {
			th.TimeNs[cur.State] += cur.End - cur.Begin
			th.Intervals = append(th.Intervals, *cur)
		}
		r.Threads = append(r.Threads, *th)
	}
	sort.Slice(r.Threads, func(i, j int) bool {
		return r.Threads[i].Label+"\x00"+r.Threads[i].Thread < r.Threads[j].Label+"\x00"+r.Threads[j].Thread
	})
	for k, q := range a.queues {
		r.Queues = append(r.Queues, q.summary(k.a, k.b))
	}
	sort.Slice(r.Queues, func(i, j int) bool {
		return r.Queues[i].Label+"\x00"+r.Queues[i].Name < r.Queues[j].Label+"\x00"+r.Queues[j].Name
	})
	return r, nil
}

func (q *queueSamples) summary(label, name string) QueueFill {
	f := QueueFill{Label: label, Name: name, Capacity: q.cap, Samples: uint64(len(q.use)), Min: q.use[0], Timeline: []FillPoint{}}
	var sum float64
	first, last := q.ts[0], q.ts[0]
	for i, u := range q.use {
		sum += float64(u)
		f.Min, f.Max = min(f.Min, u), max(f.Max, u)
		if u == 0 {
			f.Empty++
		}
		if u >= q.cap {
			f.Full++
		}
		bin := 9
		if q.cap > 0 && u < q.cap {
			bin = int(uint64(u) * 10 / uint64(q.cap))
		}
		f.Histogram[bin]++
		first, last = min(first, q.ts[i]), max(last, q.ts[i])
	}
	n := float64(len(q.use))
	f.Mean, f.Empty, f.Full = sum/n, f.Empty/n, f.Full/n
	const spans = 20
	width := (last - first + spans) / spans
	pts := make([]FillPoint, spans)
	for i := range pts {
		pts[i].Begin = first + uint64(i)*width
		pts[i].End = pts[i].Begin + width
	}
	for i, u := range q.use {
		p := &pts[(q.ts[i]-first)/width]
		p.Samples++
		p.Mean += float64(u)
	}
	for _, p := range pts {
		if p.Samples > 0 {
			p.Mean /= float64(p.Samples)
			f.Timeline = append(f.Timeline, p)
		}
	}
	return f
}
