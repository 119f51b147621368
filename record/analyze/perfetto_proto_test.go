package analyze

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os/exec"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/dpperf/dpperf/record/ctf"
)

// decodedTrack is a TrackDescriptor read back from an export.
type decodedTrack struct {
	parent  uint64
	name    string
	kind    string // process, thread or counter
	pid     int64
	tid     int64
	process string
	thread  string
}

// decodedEvent is a TrackEvent read back, with its absolute time and its
// interned names resolved.
type decodedEvent struct {
	track   uint64
	ts      uint64
	typ     uint64
	name    string
	cat     string
	counter int64
	args    map[string]any
}

// decodedSeq is the state of one packet sequence while decoding.
type decodedSeq struct {
	cleared bool
	clock   uint64 // sequence clock id from the defaults
	track   uint64 // default track
	last    uint64 // time of the last packet on the sequence clock
	based   bool
	names   map[uint64]string
	cats    map[uint64]string
	annot   map[uint64]string
}

// decodePerfetto reads a Trace written by ExportPerfettoProto, checking
// the rules a reader relies on: every track event is on a sequence whose
// incremental state was cleared, says it needs that state, refers to
// interned names defined before and to described tracks, and has a time.
func decodePerfetto(data []byte) (map[uint64]decodedTrack, []decodedEvent, error) {
	tracks := map[uint64]decodedTrack{}
	seqs := map[uint64]*decodedSeq{}
	var events []decodedEvent
	err := eachField(data, func(num protowire.Number, typ protowire.Type, v uint64, b []byte) error {
		if num != fTracePacket || typ != protowire.BytesType {
			return fmt.Errorf("trace field %d type %d", num, typ)
		}
		return decodePacket(b, tracks, seqs, &events)
	})
	if err != nil {
		return nil, nil, err
	}
	for _, e := range events {
		if _, ok := tracks[e.track]; !ok {
			return nil, nil, fmt.Errorf("event %q on undescribed track %d", e.name, e.track)
		}
	}
	for u, t := range tracks {
		if t.kind != "process" {
			if p, ok := tracks[t.parent]; !ok || p.kind != "process" {
				return nil, nil, fmt.Errorf("track %d: parent %d is no process track", u, t.parent)
			}
		}
	}
	return tracks, events, nil
}

func decodePacket(b []byte, tracks map[uint64]decodedTrack, seqs map[uint64]*decodedSeq, events *[]decodedEvent) error {
	var (
		ts, seqID, flags         uint64
		hasTS                    bool
		te, interned, defs, snap []byte
		desc                     []byte
	)
	err := eachField(b, func(num protowire.Number, typ protowire.Type, v uint64, m []byte) error {
		switch num {
		case fPacketTimestamp:
			ts, hasTS = v, true
		case fPacketSeqID:
			seqID = v
		case fPacketSeqFlags:
			flags = v
		case fPacketTrackEvent:
			te = m
		case fPacketInterned:
			interned = m
		case fPacketDefaults:
			defs = m
		case fPacketClockSnapshot:
			snap = m
		case fPacketTrackDesc:
			desc = m
		default:
			return fmt.Errorf("unexpected packet field %d", num)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if desc != nil {
		if err := decodeDescriptor(desc, tracks); err != nil {
			return err
		}
	}
	var q *decodedSeq
	if seqID != 0 {
		q = seqs[seqID]
		if flags&seqIncrementalCleared != 0 {
			q = &decodedSeq{cleared: true, names: map[uint64]string{}, cats: map[uint64]string{}, annot: map[uint64]string{}}
			seqs[seqID] = q
		}
		if q == nil {
			return fmt.Errorf("sequence %d used before its state was cleared", seqID)
		}
	}
	if defs != nil {
		if err := eachField(defs, func(num protowire.Number, _ protowire.Type, v uint64, m []byte) error {
			switch num {
			case fDefaultsClockID:
				q.clock = v
			case fDefaultsTrackEvent:
				return eachField(m, func(num protowire.Number, _ protowire.Type, v uint64, _ []byte) error {
					if num == fEventDefaultsTrack {
						q.track = v
					}
					return nil
				})
			}
			return nil
		}); err != nil {
			return err
		}
	}
	if snap != nil {
		if q == nil {
			return errors.New("clock snapshot outside a sequence")
		}
		clocks := map[uint64]uint64{}
		if err := eachField(snap, func(num protowire.Number, _ protowire.Type, _ uint64, m []byte) error {
			if num != fSnapshotClocks {
				return nil
			}
			var id, t uint64
			err := eachField(m, func(num protowire.Number, _ protowire.Type, v uint64, _ []byte) error {
				switch num {
				case fClockID:
					id = v
				case fClockTimestamp:
					t = v
				}
				return nil
			})
			clocks[id] = t
			return err
		}); err != nil {
			return err
		}
		if clocks[q.clock] != clocks[clockMonotonic] {
			return fmt.Errorf("sequence clock at %d, monotonic at %d", clocks[q.clock], clocks[clockMonotonic])
		}
		q.last, q.based = clocks[q.clock], true
	}
	if interned != nil {
		if err := decodeInterned(interned, q); err != nil {
			return err
		}
	}
	if te == nil {
		return nil
	}
	switch {
	case q == nil:
		return errors.New("track event outside a sequence")
	case flags&seqNeedsIncremental == 0:
		return errors.New("track event without SEQ_NEEDS_INCREMENTAL_STATE")
	case !hasTS || !q.based:
		return errors.New("track event without a time on a based sequence clock")
	}
	q.last += ts
	e := decodedEvent{track: q.track, ts: q.last, args: map[string]any{}}
	err = eachField(te, func(num protowire.Number, _ protowire.Type, v uint64, m []byte) error {
		var ok bool
		switch num {
		case fEventType:
			e.typ = v
		case fEventTrack:
			e.track = v
		case fEventCounter:
			e.counter = int64(v)
		case fEventNameIID:
			if e.name, ok = q.names[v]; !ok {
				return fmt.Errorf("event name iid %d not interned", v)
			}
		case fEventCategoryIIDs:
			if e.cat, ok = q.cats[v]; !ok {
				return fmt.Errorf("category iid %d not interned", v)
			}
		case fEventAnnotations:
			return decodeAnnotation(m, q, e.args)
		default:
			return fmt.Errorf("unexpected track event field %d", num)
		}
		return nil
	})
	if err != nil {
		return err
	}
	*events = append(*events, e)
	return nil
}

func decodeDescriptor(b []byte, tracks map[uint64]decodedTrack) error {
	var uuid uint64
	var t decodedTrack
	err := eachField(b, func(num protowire.Number, _ protowire.Type, v uint64, m []byte) error {
		switch num {
		case fDescUUID:
			uuid = v
		case fDescParent:
			t.parent = v
		case fDescName:
			t.name = string(m)
		case fDescCounter:
			t.kind = "counter"
		case fDescProcess:
			t.kind = "process"
			return eachField(m, func(num protowire.Number, _ protowire.Type, v uint64, m []byte) error {
				switch num {
				case fProcessPid:
					t.pid = int64(v)
				case fProcessName:
					t.process = string(m)
				}
				return nil
			})
		case fDescThread:
			t.kind = "thread"
			return eachField(m, func(num protowire.Number, _ protowire.Type, v uint64, m []byte) error {
				switch num {
				case fThreadPid:
					t.pid = int64(v)
				case fThreadTid:
					t.tid = int64(v)
				case fThreadName:
					t.thread = string(m)
				}
				return nil
			})
		}
		return nil
	})
	if err != nil {
		return err
	}
	if _, dup := tracks[uuid]; dup || uuid == 0 || t.kind == "" {
		return fmt.Errorf("track descriptor %d (%s) duplicated, zero or of no kind", uuid, t.kind)
	}
	tracks[uuid] = t
	return nil
}

func decodeInterned(b []byte, q *decodedSeq) error {
	if q == nil {
		return errors.New("interned data outside a sequence")
	}
	return eachField(b, func(num protowire.Number, _ protowire.Type, _ uint64, m []byte) error {
		var iid uint64
		var name string
		if err := eachField(m, func(n protowire.Number, _ protowire.Type, v uint64, s []byte) error {
			switch n {
			case fInternIID:
				iid = v
			case fInternName:
				name = string(s)
			}
			return nil
		}); err != nil {
			return err
		}
		table := map[protowire.Number]map[uint64]string{fInternNames: q.names, fInternCategories: q.cats, fInternAnnotNames: q.annot}[num]
		if table == nil {
			return fmt.Errorf("unexpected interned field %d", num)
		}
		if _, dup := table[iid]; dup || iid == 0 {
			return fmt.Errorf("interned field %d: iid %d redefined or zero", num, iid)
		}
		table[iid] = name
		return nil
	})
}

func decodeAnnotation(b []byte, q *decodedSeq, args map[string]any) error {
	var name string
	var val any
	err := eachField(b, func(num protowire.Number, _ protowire.Type, v uint64, m []byte) error {
		var ok bool
		switch num {
		case fAnnotNameIID:
			if name, ok = q.annot[v]; !ok {
				return fmt.Errorf("annotation name iid %d not interned", v)
			}
		case fAnnotUint:
			val = v
		case fAnnotInt:
			val = int64(v)
		case fAnnotString:
			val = string(m)
		}
		return nil
	})
	args[name] = val
	return err
}

// eachField calls fn with every field of the message b: its number, wire
// type, value (varints) or bytes (length-delimited fields).
func eachField(b []byte, fn func(protowire.Number, protowire.Type, uint64, []byte) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		var v uint64
		var m []byte
		switch typ {
		case protowire.VarintType:
			v, n = protowire.ConsumeVarint(b)
		case protowire.BytesType:
			m, n = protowire.ConsumeBytes(b)
		default:
			return fmt.Errorf("field %d: wire type %d not written by the export", num, typ)
		}
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		if err := fn(num, typ, v, m); err != nil {
			return err
		}
	}
	return nil
}

// TestPerfettoProtoMatchesJSON exports the fixture both ways and checks
// that the protobuf trace decodes into the same events, on the same
// tracks, at the same times as the JSON.
func TestPerfettoProtoMatchesJSON(t *testing.T) {
	dir := fixture(t)
	var js, pb bytes.Buffer
	if _, err := ExportPerfetto(dir, &js); err != nil {
		t.Fatal(err)
	}
	if _, err := ExportPerfettoProto(dir, &pb); err != nil {
		t.Fatal(err)
	}
	tracks, events, err := decodePerfetto(pb.Bytes())
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	var doc struct {
		TraceEvents []traceEvent `json:"traceEvents"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	var want []traceEvent
	for _, e := range doc.TraceEvents {
		if e.Ph != "M" {
			want = append(want, e)
		}
	}
	if len(events) != len(want) {
		t.Fatalf("%d protobuf events, %d JSON events", len(events), len(want))
	}
	phase := map[uint64]string{typeSliceBegin: "B", typeSliceEnd: "E", typeInstant: "i", typeCounter: "C"}
	for i, e := range events {
		w := want[i]
		if phase[e.typ] != w.Ph || float64(e.ts)/1e3 != w.Ts {
			t.Errorf("event %d: %s at %d ns, JSON %s at %v µs", i, phase[e.typ], e.ts, w.Ph, w.Ts)
		}
		tr := tracks[e.track]
		switch e.typ {
		case typeCounter:
			if tr.kind != "counter" || tr.name != w.Name || float64(e.counter) != w.Args["used"] {
				t.Errorf("event %d: counter %q = %d on a %s track, JSON %q = %v", i, tr.name, e.counter, tr.kind, w.Name, w.Args["used"])
			}
		case typeSliceEnd:
			if tr.kind != "thread" {
				t.Errorf("event %d: slice end on a %s track", i, tr.kind)
			}
		default:
			if tr.kind != "thread" || e.name != w.Name || e.cat != w.Cat {
				t.Errorf("event %d: %q (%q) on a %s track, JSON %q (%q)", i, e.name, e.cat, tr.kind, w.Name, w.Cat)
			}
			for k, v := range e.args {
				if jv, ok := w.Args[k]; !ok || fmt.Sprint(jv) != fmt.Sprint(v) {
					t.Errorf("event %d: argument %s = %v, JSON %v", i, k, v, jv)
				}
			}
		}
		if tr.kind != "process" {
			p := tracks[tr.parent]
			if p.process != "app/router" || (tr.kind == "thread" && tr.thread != "ep") {
				t.Errorf("event %d on %+v of %+v", i, tr, p)
			}
		}
	}
	if float64(pb.Len()) > 0.5*float64(js.Len()) {
		t.Errorf("protobuf export %d bytes, JSON %d", pb.Len(), js.Len())
	}
	t.Logf("protobuf %d bytes, JSON %d bytes, %d events", pb.Len(), js.Len(), len(events))
}

// TestPerfettoProtoDecodeRaw checks the export with protoc's schema-less
// decoder, a reader that shares no code with it.
func TestPerfettoProtoDecodeRaw(t *testing.T) {
	protoc, err := exec.LookPath("protoc")
	if err != nil {
		t.Fatal("protoc is required (scripts/setup.sh installs protobuf-compiler)")
	}
	var pb bytes.Buffer
	if _, err := ExportPerfettoProto(fixture(t), &pb); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(protoc, "--decode_raw")
	cmd.Stdin = &pb
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("protoc --decode_raw: %v\n%s", err, out)
	}
	text := string(out)
	// Every packet is field 1 of the Trace; the process track is named.
	if strings.Count(text, "\n1 {") == 0 && !strings.HasPrefix(text, "1 {") {
		t.Errorf("no packets in\n%.2000s", text)
	}
	for _, s := range []string{`6: "app/router"`, `5: "ep"`, `2: "route"`, `2: "checkpoint"`} {
		if !strings.Contains(text, s) {
			t.Errorf("protoc --decode_raw output lacks %s", s)
		}
	}
}

func TestPerfettoProtoTimeGoesBack(t *testing.T) {
	// A stream whose time goes back gets a new clock snapshot; the
	// decoded times must still be the events' own.
	p := &protoExport{procs: map[string]*pfProcess{}, seqs: map[string]*pfSeq{}}
	var out bytes.Buffer
	p.w = bufio.NewWriter(&out)
	ref := &StreamRef{Path: "c/t", Label: "c", Thread: "t"}
	times := []uint64{1000, 900, 5000, math.MaxUint32}
	class := &ctf.StandardClasses()[ctf.IDSignalSubmit-1]
	for _, ts := range times {
		p.Event(ref, &ctf.Event{Class: class, Timestamp: ts, Values: []ctf.Value{{Uint: 1}}})
	}
	if err := p.w.Flush(); err != nil || p.err != nil {
		t.Fatal(err, p.err)
	}
	_, events, err := decodePerfetto(out.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range events {
		if e.ts != times[i] {
			t.Errorf("event %d at %d, want %d", i, e.ts, times[i])
		}
	}
}
