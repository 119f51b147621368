package analyze

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/dpperf/dpperf/internal/golden"

	"github.com/dpperf/dpperf/record/ctf"
)

// fixture writes a recording with known timings: 10 route scopes lasting
// 100..1000 ns, one END without START, two trigger_once round trips (50 and
// 150 ns), a served RPC and three queue fill samples.
func fixture(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	comp := filepath.Join(dir, "app", "router")
	if err := os.MkdirAll(comp, 0o755); err != nil {
		t.Fatal(err)
	}
	md := &ctf.Metadata{UUID: ctf.NewUUID(), Label: "app/router", Classes: ctf.StandardClasses()}
	if err := os.WriteFile(filepath.Join(comp, "metadata"), []byte(md.Text()), 0o644); err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	var ev []byte
	cp := func(ts uint64, typ uint8, name string) {
		ev = ctf.AppendEventHeader(ev, ctf.IDCheckpoint, ts)
		ev = le.AppendUint32(ev, 1)
		ev = le.AppendUint64(ev, 0)
		ev = append(ev, typ)
		ev = ctf.AppendString(ev, name)
	}
	rpc := func(ts uint64, id uint8, name, peer string) {
		ev = ctf.AppendEventHeader(ev, id, ts)
		ev = ctf.AppendString(ev, name)
		ev = ctf.AppendString(ev, peer)
	}
	fill := func(ts uint64, used, capacity uint32) {
		ev = ctf.AppendEventHeader(ev, ctf.IDQueueFill, ts)
		ev = le.AppendUint32(ev, used)
		ev = le.AppendUint32(ev, capacity)
		ev = ctf.AppendString(ev, "rx")
	}
	ts := uint64(10_000)
	rpc(ts, ctf.IDRpcDispatch, "submit", "app/sender")
	for i := uint64(1); i <= 10; i++ {
		cp(ts, ctf.CheckpointStart, "route")
		ts += 100 * i
		cp(ts, ctf.CheckpointEnd, "route")
		ts += 10
	}
	cp(ts, ctf.CheckpointEnd, "lookup")
	rpc(ts+1, ctf.IDRpcCall, "trigger_once", "timer")
	rpc(ts+51, ctf.IDRpcReturned, "trigger_once", "timer")
	rpc(ts+100, ctf.IDRpcCall, "trigger_once", "timer")
	rpc(ts+250, ctf.IDRpcReturned, "trigger_once", "timer")
	fill(ts+300, 0, 10)
	fill(ts+400, 5, 10)
	fill(ts+500, 10, 10)
	rpc(ts+600, ctf.IDRpcReply, "submit", "app/sender")
	var out bytes.Buffer
	s := ctf.NewStream(&out, "app/router", "ep")
	half := len(ev) / 2
	// Split the events over two packets at an event boundary.
	for half < len(ev) && ev[half] != ctf.IDCheckpoint {
		half++
	}
	if err := s.WritePacket(0, ctf.EventTimestamp(ev[half:]), 3, ev[:half]); err != nil {
		t.Fatal(err)
	}
	if err := s.WritePacket(ctf.EventTimestamp(ev[half:]), ts+1000, 0, ev[half:]); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(comp, "ep"), out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestReportGolden(t *testing.T) {
	r, err := Analyze(fixture(t))
	if err != nil {
		t.Fatal(err)
	}
	r.Dir = "REC"
	d := r.Checkpoints[0]
	if d.Name != "route" || d.Count != 10 || d.Mean != 550 || d.P50 != 550 || d.P90 != 910 || d.Max != 1000 {
		t.Errorf("route durations %+v", d)
	}
	if l := r.Checkpoints[1]; l.Name != "lookup" || l.Unpaired != 1 || l.Count != 0 {
		t.Errorf("lookup %+v", l)
	}
	if x := r.RPCs[0]; x.Caller != "app/router" || x.Callee != "timer" || x.Count != 2 || x.Min != 50 || x.Max != 150 {
		t.Errorf("rpc %+v", x)
	}
	if q := r.Queues[0]; q.Samples != 3 || q.Mean != 5 || q.Empty != 1.0/3 || q.Full != 1.0/3 || q.Histogram[5] != 1 || q.Histogram[9] != 1 {
		t.Errorf("queue %+v", q)
	}
	th := r.Threads[0]
	if th.TimeNs[StateAwaitingReply] != 200 || len(th.Intervals) != 6 || th.Intervals[5].State != StateAwaitingRPC {
		t.Errorf("thread states %+v", th.TimeNs)
	}
	if r.Streams[0].Discarded != 3 || r.Streams[0].Packets != 2 {
		t.Errorf("stream %+v", r.Streams[0])
	}
	var text bytes.Buffer
	if err := WriteText(&text, r, true); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "report.txt", text.Bytes())
	js, _ := json.MarshalIndent(r, "", "  ")
	golden.Check(t, "report.json", append(js, '\n'))
}

func TestPerfettoExport(t *testing.T) {
	var out bytes.Buffer
	if _, err := ExportPerfetto(fixture(t), &out); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		TraceEvents []traceEvent `json:"traceEvents"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("export is not JSON: %v\n%s", err, out.Bytes())
	}
	count := map[string]int{}
	for _, e := range doc.TraceEvents {
		count[e.Ph]++
		if e.Ph == "B" && e.Name == "route" && count["B"] == 2 && e.Ts != 10 {
			t.Errorf("first route slice at %v µs, want 10", e.Ts)
		}
	}
	// 10 route + 2 calls + 1 served RPC open and close; 3 counters; one
	// instant (the unpaired END is a slice end too); 2 metadata events.
	if count["B"] != 13 || count["E"] != 14 || count["C"] != 3 || count["M"] != 2 {
		t.Errorf("event phases %v", count)
	}
}
