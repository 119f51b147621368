package analyze

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"

	"github.com/dpperf/dpperf/record/ctf"
)

// ExportPerfetto writes the recording in dir as Chrome/Perfetto trace-event
// JSON: one process per component, one thread per stream; checkpoint
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
	e := traceEvent{Ts: float64(ev.Timestamp) / 1e3, Pid: pid, Tid: tid, Ph: "i", S: "t", Name: ev.Class.Name}
	switch ev.Class.ID {
	case ctf.IDCheckpoint:
		e.Name, e.Cat = str(ev, "name"), "checkpoint"
		switch num(ev, "type") {
		case ctf.CheckpointStart:
			e.Ph, e.S = "B", ""
		case ctf.CheckpointEnd:
			e.Ph, e.S = "E", ""
		}
		e.Args = fields(ev)
	case ctf.IDRpcCall, ctf.IDRpcReturned:
		e.Name, e.Cat, e.S = fmt.Sprintf("call %s -> %s", str(ev, "name"), str(ev, "peer")), "rpc", ""
		e.Ph = map[bool]string{true: "B", false: "E"}[ev.Class.ID == ctf.IDRpcCall]
	case ctf.IDRpcDispatch, ctf.IDRpcReply:
		e.Name, e.Cat, e.S = fmt.Sprintf("serve %s <- %s", str(ev, "name"), str(ev, "peer")), "rpc", ""
		e.Ph = map[bool]string{true: "B", false: "E"}[ev.Class.ID == ctf.IDRpcDispatch]
	case ctf.IDQueueFill:
		e.Name, e.Ph, e.S = "queue "+str(ev, "name"), "C", ""
		e.Args = map[string]any{"used": num(ev, "used")}
	default:
		e.Args = fields(ev)
	}
	p.emit(e)
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
