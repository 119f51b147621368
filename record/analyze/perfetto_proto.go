package analyze

import (
	"bufio"
	"io"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/dpperf/dpperf/record/ctf"
)

// ExportPerfettoProto writes the recording in dir in Perfetto's own trace
// format (a protobuf Trace of TracePackets; layout and field numbers in
// PERFETTO.md): the same tracks, slices, instants and counters as
// ExportPerfetto's JSON, in a fraction of its size. Each stream is one
// packet sequence with interned names, its thread track as the default
// track, and timestamps as deltas of a sequence clock mapped onto
// CLOCK_MONOTONIC. It streams: memory grows with the number of streams and
// distinct names, not with the number of events.
func ExportPerfettoProto(dir string, w io.Writer) ([]string, error) {
	p := &protoExport{w: bufio.NewWriter(w), procs: map[string]*pfProcess{}, seqs: map[string]*pfSeq{}}
	_, warnings, err := Walk(dir, p)
	if err != nil {
		return nil, err
	}
	if p.err != nil {
		return nil, p.err
	}
	return warnings, p.w.Flush()
}

// Field numbers of the Perfetto messages written (perfetto.protos, see
// PERFETTO.md).
const (
	fTracePacket = 1 // Trace.packet

	fPacketClockSnapshot = 6  // TracePacket.clock_snapshot
	fPacketTimestamp     = 8  // TracePacket.timestamp
	fPacketSeqID         = 10 // TracePacket.trusted_packet_sequence_id
	fPacketTrackEvent    = 11 // TracePacket.track_event
	fPacketInterned      = 12 // TracePacket.interned_data
	fPacketSeqFlags      = 13 // TracePacket.sequence_flags
	fPacketDefaults      = 59 // TracePacket.trace_packet_defaults
	fPacketTrackDesc     = 60 // TracePacket.track_descriptor

	fSnapshotClocks  = 1 // ClockSnapshot.clocks
	fSnapshotPrimary = 2 // ClockSnapshot.primary_trace_clock
	fClockID         = 1 // ClockSnapshot.Clock.clock_id
	fClockTimestamp  = 2 // ClockSnapshot.Clock.timestamp
	fClockIncrement  = 3 // ClockSnapshot.Clock.is_incremental

	fDefaultsClockID    = 58 // TracePacketDefaults.timestamp_clock_id
	fDefaultsTrackEvent = 11 // TracePacketDefaults.track_event_defaults
	fEventDefaultsTrack = 11 // TrackEventDefaults.track_uuid

	fDescUUID    = 1 // TrackDescriptor.uuid
	fDescName    = 2 // TrackDescriptor.name
	fDescProcess = 3 // TrackDescriptor.process
	fDescThread  = 4 // TrackDescriptor.thread
	fDescParent  = 5 // TrackDescriptor.parent_uuid
	fDescCounter = 8 // TrackDescriptor.counter

	fProcessPid  = 1 // ProcessDescriptor.pid
	fProcessName = 6 // ProcessDescriptor.process_name
	fThreadPid   = 1 // ThreadDescriptor.pid
	fThreadTid   = 2 // ThreadDescriptor.tid
	fThreadName  = 5 // ThreadDescriptor.thread_name

	fEventCategoryIIDs = 3  // TrackEvent.category_iids
	fEventAnnotations  = 4  // TrackEvent.debug_annotations
	fEventType         = 9  // TrackEvent.type
	fEventNameIID      = 10 // TrackEvent.name_iid
	fEventTrack        = 11 // TrackEvent.track_uuid
	fEventCounter      = 30 // TrackEvent.counter_value

	fAnnotNameIID = 1 // DebugAnnotation.name_iid
	fAnnotUint    = 3 // DebugAnnotation.uint_value
	fAnnotInt     = 4 // DebugAnnotation.int_value
	fAnnotString  = 6 // DebugAnnotation.string_value

	fInternCategories = 1 // InternedData.event_categories (EventCategory)
	fInternNames      = 2 // InternedData.event_names (EventName)
	fInternAnnotNames = 3 // InternedData.debug_annotation_names (DebugAnnotationName)
	fInternIID        = 1 // iid of each interned entry
	fInternName       = 2 // name of each interned entry
)

// Values of the enums used.
const (
	seqIncrementalCleared = 1 // SEQ_INCREMENTAL_STATE_CLEARED
	seqNeedsIncremental   = 2 // SEQ_NEEDS_INCREMENTAL_STATE

	clockMonotonic = 3  // BUILTIN_CLOCK_MONOTONIC
	clockSequence  = 64 // first sequence-scoped clock id

	typeSliceBegin = 1 // TrackEvent.TYPE_SLICE_BEGIN
	typeSliceEnd   = 2 // TrackEvent.TYPE_SLICE_END
	typeInstant    = 3 // TrackEvent.TYPE_INSTANT
	typeCounter    = 4 // TrackEvent.TYPE_COUNTER
)

type protoExport struct {
	w        *bufio.Writer
	err      error
	nextUUID uint64
	procs    map[string]*pfProcess // by component label
	seqs     map[string]*pfSeq     // by stream path
	nextSeq  uint32
	nextTid  int32
	pkt, msg []byte // scratch: the packet and the message nested in it
	ann      []byte
	interned []byte
}

// pfProcess is one component: a process track and its counter tracks.
type pfProcess struct {
	uuid     uint64
	pid      int32
	counters map[string]uint64 // counter name -> track uuid
}

// pfSeq is the packet sequence of one stream: its thread track, the
// interning tables and the time of its last packet (the base of the
// next timestamp delta).
type pfSeq struct {
	id    uint32
	track uint64
	last  uint64
	names map[string]uint64
	cats  map[string]uint64
	annot map[string]uint64
	open  []uint64 // data of the open slices, innermost last
}

func (p *protoExport) uuid() uint64 { p.nextUUID++; return p.nextUUID }

// writePacket writes p.pkt as one TracePacket of the Trace.
func (p *protoExport) writePacket() {
	if p.err != nil {
		return
	}
	var hdr [16]byte
	b := protowire.AppendTag(hdr[:0], fTracePacket, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(len(p.pkt)))
	if _, err := p.w.Write(b); err != nil {
		p.err = err
		return
	}
	_, p.err = p.w.Write(p.pkt)
}

func appendUint(b []byte, num protowire.Number, v uint64) []byte {
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

func appendString(b []byte, num protowire.Number, s string) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, s)
}

func appendMessage(b []byte, num protowire.Number, m []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, m)
}

// process returns the process of label, writing its track descriptor the
// first time.
func (p *protoExport) process(label string) *pfProcess {
	if pr := p.procs[label]; pr != nil {
		return pr
	}
	pr := &pfProcess{uuid: p.uuid(), pid: int32(len(p.procs) + 1), counters: map[string]uint64{}}
	p.procs[label] = pr
	proc := appendUint(nil, fProcessPid, uint64(pr.pid))
	proc = appendString(proc, fProcessName, label)
	desc := appendUint(nil, fDescUUID, pr.uuid)
	desc = appendMessage(desc, fDescProcess, proc)
	p.pkt = appendMessage(p.pkt[:0], fPacketTrackDesc, desc)
	p.writePacket()
	return pr
}

// counter returns the counter track name of process pr, writing its
// descriptor the first time.
func (p *protoExport) counter(pr *pfProcess, name string) uint64 {
	if u, ok := pr.counters[name]; ok {
		return u
	}
	u := p.uuid()
	pr.counters[name] = u
	desc := appendUint(nil, fDescUUID, u)
	desc = appendUint(desc, fDescParent, pr.uuid)
	desc = appendString(desc, fDescName, name)
	desc = appendMessage(desc, fDescCounter, nil)
	p.pkt = appendMessage(p.pkt[:0], fPacketTrackDesc, desc)
	p.writePacket()
	return u
}

// sequence returns the sequence of stream s, starting it (thread track,
// clock, defaults) at time ts the first time.
func (p *protoExport) sequence(s *StreamRef, ts uint64) *pfSeq {
	if q := p.seqs[s.Path]; q != nil {
		return q
	}
	pr := p.process(s.Label)
	p.nextSeq++
	p.nextTid++
	q := &pfSeq{id: p.nextSeq, track: p.uuid(), names: map[string]uint64{}, cats: map[string]uint64{}, annot: map[string]uint64{}}
	p.seqs[s.Path] = q
	th := appendUint(nil, fThreadPid, uint64(pr.pid))
	th = appendUint(th, fThreadTid, uint64(p.nextTid))
	th = appendString(th, fThreadName, s.Thread)
	desc := appendUint(nil, fDescUUID, q.track)
	desc = appendUint(desc, fDescParent, pr.uuid)
	desc = appendMessage(desc, fDescThread, th)
	p.pkt = appendMessage(p.pkt[:0], fPacketTrackDesc, desc)
	p.writePacket()

	ted := appendUint(nil, fEventDefaultsTrack, q.track)
	def := appendUint(nil, fDefaultsClockID, clockSequence)
	def = appendMessage(def, fDefaultsTrackEvent, ted)
	p.pkt = appendUint(p.pkt[:0], fPacketSeqID, uint64(q.id))
	p.pkt = appendUint(p.pkt, fPacketSeqFlags, seqIncrementalCleared)
	p.pkt = appendMessage(p.pkt, fPacketDefaults, def)
	p.rebase(q, ts)
	return q
}

// rebase appends to p.pkt a clock snapshot that sets q's sequence clock to
// ts (CLOCK_MONOTONIC ns) and writes the packet. The next timestamp delta
// counts from ts.
func (p *protoExport) rebase(q *pfSeq, ts uint64) {
	inc := appendUint(nil, fClockID, clockSequence)
	inc = appendUint(inc, fClockTimestamp, ts)
	inc = appendUint(inc, fClockIncrement, 1)
	mono := appendUint(nil, fClockID, clockMonotonic)
	mono = appendUint(mono, fClockTimestamp, ts)
	snap := appendMessage(nil, fSnapshotClocks, inc)
	snap = appendMessage(snap, fSnapshotClocks, mono)
	snap = appendUint(snap, fSnapshotPrimary, clockMonotonic)
	if len(p.pkt) == 0 {
		p.pkt = appendUint(p.pkt, fPacketSeqID, uint64(q.id))
	}
	p.pkt = appendMessage(p.pkt, fPacketClockSnapshot, snap)
	p.writePacket()
	q.last = ts
}

// intern returns the iid of name in table, adding an entry of InternedData
// field num to p.interned when it is new.
func (p *protoExport) intern(table map[string]uint64, num protowire.Number, name string) uint64 {
	if iid, ok := table[name]; ok {
		return iid
	}
	iid := uint64(len(table) + 1)
	table[name] = iid
	e := appendUint(nil, fInternIID, iid)
	e = appendString(e, fInternName, name)
	p.interned = appendMessage(p.interned, num, e)
	return iid
}

// Event writes one event as a TrackEvent packet on its stream's sequence.
func (p *protoExport) Event(s *StreamRef, ev *ctf.Event) {
	if p.err != nil {
		return
	}
	q := p.sequence(s, ev.Timestamp)
	if ev.Timestamp < q.last {
		// Deltas cannot be negative: a stream whose time goes back (only
		// a damaged one) gets a new clock snapshot.
		p.pkt = p.pkt[:0]
		p.rebase(q, ev.Timestamp)
	}
	sh := shapeOf(ev)
	p.interned = p.interned[:0]
	te := p.msg[:0]
	switch sh.kind {
	case shapeBegin:
		te = appendUint(te, fEventType, typeSliceBegin)
	case shapeEnd:
		te = appendUint(te, fEventType, typeSliceEnd)
	case shapeCounter:
		te = appendUint(te, fEventType, typeCounter)
		te = appendUint(te, fEventTrack, p.counter(p.process(s.Label), sh.name))
		te = appendUint(te, fEventCounter, sh.value)
	default:
		te = appendUint(te, fEventType, typeInstant)
	}
	if sh.kind != shapeEnd && sh.kind != shapeCounter {
		te = appendUint(te, fEventNameIID, p.intern(q.names, fInternNames, sh.name))
		if sh.cat != "" {
			te = appendUint(te, fEventCategoryIIDs, p.intern(q.cats, fInternCategories, sh.cat))
		}
	}
	te = p.appendArgs(te, q, ev, sh)
	p.msg = te

	pkt := appendUint(p.pkt[:0], fPacketTimestamp, ev.Timestamp-q.last)
	q.last = ev.Timestamp
	pkt = appendUint(pkt, fPacketSeqID, uint64(q.id))
	pkt = appendUint(pkt, fPacketSeqFlags, seqNeedsIncremental)
	if len(p.interned) > 0 {
		pkt = appendMessage(pkt, fPacketInterned, p.interned)
	}
	p.pkt = appendMessage(pkt, fPacketTrackEvent, te)
	p.writePacket()
}

// appendArgs appends the event's fields as debug annotations, leaving out
// what the slice already says: a checkpoint slice's name and type, a zero
// addr, and an END's data when it equals its BEGIN's.
func (p *protoExport) appendArgs(te []byte, q *pfSeq, ev *ctf.Event, sh shape) []byte {
	slice := ev.Class.ID == ctf.IDCheckpoint && (sh.kind == shapeBegin || sh.kind == shapeEnd)
	var data uint64
	if slice {
		data = num(ev, "data")
	}
	skipData := false
	switch sh.kind {
	case shapeBegin:
		q.open = append(q.open, data)
	case shapeEnd:
		if n := len(q.open); n > 0 {
			skipData = slice && q.open[n-1] == data
			q.open = q.open[:n-1]
		}
	}
	if !sh.args {
		return te
	}
	return p.appendFields(te, q, ev, slice, skipData)
}

// appendFields appends the fields of ev as debug annotations; for a
// checkpoint slice without its name, type and a zero addr, and without
// data when skipData is set.
func (p *protoExport) appendFields(te []byte, q *pfSeq, ev *ctf.Event, slice, skipData bool) []byte {
	for i, f := range ev.Class.Fields {
		v := ev.Values[i]
		if slice {
			switch {
			case f.Name == "name" || f.Name == "type":
				continue
			case f.Name == "addr" && v.Uint == 0:
				continue
			case f.Name == "data" && skipData:
				continue
			}
		}
		a := appendUint(p.ann[:0], fAnnotNameIID, p.intern(q.annot, fInternAnnotNames, f.Name))
		switch {
		case f.Kind == ctf.KindString:
			a = appendString(a, fAnnotString, v.Str)
		case f.Kind.Signed():
			a = appendUint(a, fAnnotInt, uint64(v.Int))
		default:
			a = appendUint(a, fAnnotUint, v.Uint)
		}
		p.ann = a
		te = appendMessage(te, fEventAnnotations, a)
	}
	return te
}
