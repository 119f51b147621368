package analyze

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"

	"github.com/dpperf/dpperf/record/ctf"
)

// ExportPerfetto writes the recording in dir as Chrome/Perfetto trace-event
// JSON (ExportPerfettoProto writes Perfetto's own, smaller format): one process per component, one thread per stream; checkpoint
// START/END and RPC call/return and dispatch/reply as slices, other
// checkpoints, signals and kernel events as instants with their fields as
// arguments, and queue fill samples as counters. Timestamps are in µs of
// the monotonic clock. It streams: memory does not grow with the trace.
func ExportPerfetto(dir string, w io.Writer) ([]string, error) {
	bw := bufio.NewWriter(w)
	p := &perfetto{w: bw, pids: map[string]int{}, tids: map[string]int{}}
	bw.WriteString(`{"displayTimeUnit":"ns","traceEvents":[`)
	_, warnings, err := Walk(dir, p)
	if err != nil {
		return nil, err
	}
	bw.WriteString("\n]}\n")
	if p.err != nil {
		return nil, p.err
	}
	return warnings, bw.Flush()
}

type perfetto struct {
	w     *bufio.Writer
	pids  map[string]int
	tids  map[string]int
	first bool
	err   error
}

type traceEvent struct {
	Name string         `json:"name"`
	Cat  string         `json:"cat,omitempty"`
	Ph   string         `json:"ph"`
	Ts   float64        `json:"ts"`
	Pid  int            `json:"pid"`
	Tid  int            `json:"tid"`
	S    string         `json:"s,omitempty"`
	Args map[string]any `json:"args,omitempty"`
}

func (p *perfetto) emit(e traceEvent) {
	if p.err != nil {
		return
	}
	b, err := json.Marshal(e)
	if err != nil {
		p.err = err
		return
	}
	if p.first {
		p.w.WriteByte(',')
	}
	p.first = true
	p.w.WriteString("\n")
	_, p.err = p.w.Write(b)
}

func (p *perfetto) ids(s *StreamRef) (int, int) {
	pid, ok := p.pids[s.Label]
	if !ok {
		pid = len(p.pids) + 1
		p.pids[s.Label] = pid
		p.emit(traceEvent{Name: "process_name", Ph: "M", Pid: pid, Args: map[string]any{"name": s.Label}})
	}
	tid, ok := p.tids[s.Path]
	if !ok {
		tid = len(p.tids) + 1
		p.tids[s.Path] = tid
		p.emit(traceEvent{Name: "thread_name", Ph: "M", Pid: pid, Tid: tid, Args: map[string]any{"name": s.Thread}})
	}
	return pid, tid
}

func (p *perfetto) Event(s *StreamRef, ev *ctf.Event) {
	pid, tid := p.ids(s)
	sh := shapeOf(ev)
	e := traceEvent{Ts: float64(ev.Timestamp) / 1e3, Pid: pid, Tid: tid, Name: sh.name, Cat: sh.cat}
	switch sh.kind {
	case shapeBegin:
		e.Ph = "B"
	case shapeEnd:
		e.Ph = "E"
	case shapeCounter:
		e.Ph = "C"
		e.Args = map[string]any{"used": sh.value}
	default:
		e.Ph, e.S = "i", "t"
	}
	if sh.args {
		e.Args = fields(ev)
	}
	p.emit(e)
}

// Shapes of events in both Perfetto exports.
const (
	shapeInstant = iota
	shapeBegin
	shapeEnd
	shapeCounter
)

// shape is how the Perfetto exports show one event: a slice begin or end,
// an instant or a counter sample, its name and category, and whether its
// fields go along as arguments.
type shape struct {
	kind  int
	name  string
	cat   string
	args  bool
	value uint64 // counter value
}

// shapeOf maps an event to its shape: checkpoint START/END and
// Rpc_call/Rpc_returned and Rpc_dispatch/Rpc_reply as slices,
// Queue_fill as a counter "queue NAME", everything else as an instant
// with its fields as arguments.
func shapeOf(ev *ctf.Event) shape {
	switch ev.Class.ID {
	case ctf.IDCheckpoint:
		sh := shape{name: str(ev, "name"), cat: "checkpoint", args: true}
		switch num(ev, "type") {
		case ctf.CheckpointStart:
			sh.kind = shapeBegin
		case ctf.CheckpointEnd:
			sh.kind = shapeEnd
		}
		return sh
	case ctf.IDRpcCall, ctf.IDRpcReturned:
		sh := shape{name: fmt.Sprintf("call %s -> %s", str(ev, "name"), str(ev, "peer")), cat: "rpc", kind: shapeEnd}
		if ev.Class.ID == ctf.IDRpcCall {
			sh.kind = shapeBegin
		}
		return sh
	case ctf.IDRpcDispatch, ctf.IDRpcReply:
		sh := shape{name: fmt.Sprintf("serve %s <- %s", str(ev, "name"), str(ev, "peer")), cat: "rpc", kind: shapeEnd}
		if ev.Class.ID == ctf.IDRpcDispatch {
			sh.kind = shapeBegin
		}
		return sh
	case ctf.IDQueueFill:
		return shape{kind: shapeCounter, name: "queue " + str(ev, "name"), value: num(ev, "used")}
	}
	return shape{name: ev.Class.Name, args: true}
}

func fields(ev *ctf.Event) map[string]any {
	m := make(map[string]any, len(ev.Class.Fields))
	for i, f := range ev.Class.Fields {
		v := ev.Values[i]
		switch {
		case f.Kind == ctf.KindString:
			m[f.Name] = v.Str
		case f.Kind.Signed():
			m[f.Name] = v.Int
		default:
			m[f.Name] = v.Uint
		}
	}
	return m
}
