package collect

import (
	"encoding/binary"

	"github.com/dpperf/dpperf/profile/event"
)

// Record lengths of the programs' ring buffer (records.md).
const (
	blockRecordLen = 64 // sizeof(struct event) of bpf/block.c
	nvmeRecordLen  = 80 // sizeof(struct nvme_event) of bpf/nvme.c
)

// recordLayout is where the fields of a record lie (records.md); the
// timestamps come first, 8 bytes per tracepoint.
type recordLayout struct {
	size                        int
	sector, dev, bytes, cpu, op int
	qid, cid                    int // -1: not in the record
}

var (
	blockRecord = recordLayout{size: blockRecordLen, sector: 40, dev: 48, bytes: 52, cpu: 56, op: 58, qid: -1, cid: -1}
	nvmeRecord  = recordLayout{size: nvmeRecordLen, sector: 56, dev: 64, bytes: 68, cpu: 76, op: 78, qid: 72, cid: 74}
)

// decoder turns the records of one program set (little endian on the
// architectures bpf2go built for) into a request's events or its whole
// record.
type decoder struct {
	layout *recordLayout
	kinds  []uint8 // path event index per tracepoint, noKind where none
}

// events appends the request's events of record b to out, in path
// order; nothing when b is too short.
func (d *decoder) events(b []byte, out []event.Event) []event.Event {
	l := d.layout
	if len(b) < l.size {
		return out
	}
	le := binary.LittleEndian
	base := event.Event{
		Sector: le.Uint64(b[l.sector:]),
		Dev:    event.Dev(le.Uint32(b[l.dev:])),
		Bytes:  le.Uint32(b[l.bytes:]),
		CPU:    le.Uint16(b[l.cpu:]),
		Op:     event.Op(b[l.op]),
	}
	if l.qid >= 0 {
		base.QID, base.CID = le.Uint16(b[l.qid:]), le.Uint16(b[l.cid:])
	}
	start := len(out)
	for tp, k := range d.kinds {
		ts := int64(le.Uint64(b[8*tp:]))
		if ts == 0 || k == noKind {
			continue
		}
		ev := base
		ev.TS, ev.Kind = ts, k
		// Insertion keeps path order (at most seven events).
		i := len(out)
		out = append(out, ev)
		for ; i > start && out[i-1].Kind > ev.Kind; i-- {
			out[i] = out[i-1]
		}
		out[i] = ev
	}
	return out
}

// record fills r from record b; false when b is too short.
func (d *decoder) record(b []byte, r *event.Record) bool {
	l := d.layout
	if len(b) < l.size {
		return false
	}
	le := binary.LittleEndian
	*r = event.Record{
		Dev:   event.Dev(le.Uint32(b[l.dev:])),
		Bytes: le.Uint32(b[l.bytes:]),
		CPU:   le.Uint16(b[l.cpu:]),
		Op:    event.Op(b[l.op]),
	}
	for tp, k := range d.kinds {
		if k != noKind {
			r.TS[k] = int64(le.Uint64(b[8*tp:]))
		}
	}
	return true
}
