package collect

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/dpperf/dpperf/profile/event"
)

// The decoder must agree with the Go struct bpf2go generated from the C
// struct, field by field.
func TestDecodeBlockRecord(t *testing.T) {
	rec := blockEvent{Ts: [5]uint64{100, 0, 0, 140, 190}, Sector: 246728, Dev: 7<<20 | 1, Bytes: 4096, Cpu: 1, Op: 1}
	var buf bytes.Buffer
	if err := binary.Write(&buf, binary.LittleEndian, rec); err != nil {
		t.Fatal(err)
	}
	if buf.Len() != 64 {
		t.Fatalf("record is %d bytes, want 64", buf.Len())
	}
	// Path block: Q=0 G=1 I=2 D=3 C=4; a path using only D and C maps them to 0, 1.
	kinds := [5]uint8{0, 1, 2, 3, 4}
	d := &decoder{&blockRecord, kinds[:]}
	evs := d.events(buf.Bytes(), nil)
	if len(evs) != 3 {
		t.Fatalf("events %+v", evs)
	}
	want := []struct {
		ts   int64
		kind uint8
	}{{100, 0}, {140, 3}, {190, 4}}
	for i, w := range want {
		e := evs[i]
		if e.TS != w.ts || e.Kind != w.kind || e.Sector != 246728 || e.Dev != event.MakeDev(7, 1) || e.Bytes != 4096 || e.CPU != 1 || e.Op != event.OpRead {
			t.Errorf("event %d = %+v", i, e)
		}
	}
	short := d.events(buf.Bytes()[:20], nil)
	if len(short) != 0 {
		t.Errorf("short record decoded: %+v", short)
	}
	kinds = [5]uint8{noKind, noKind, noKind, 0, 1}
	if evs := d.events(buf.Bytes(), nil); len(evs) != 2 || evs[0].Kind != 0 || evs[1].TS != 190 {
		t.Errorf("D/C-only path: %+v", evs)
	}
}

// A whole record lands at the path's event indexes.
func TestDecodeBlockInto(t *testing.T) {
	rec := blockEvent{Ts: [5]uint64{100, 0, 0, 140, 190}, Sector: 8, Dev: 7<<20 | 1, Bytes: 4096, Cpu: 1, Op: 2}
	var buf bytes.Buffer
	if err := binary.Write(&buf, binary.LittleEndian, rec); err != nil {
		t.Fatal(err)
	}
	kinds := [5]uint8{noKind, noKind, noKind, 0, 1} // a path of D and C only
	d := &decoder{&blockRecord, kinds[:]}
	var r event.Record
	if !d.record(buf.Bytes(), &r) {
		t.Fatal("record not decoded")
	}
	if r.TS[0] != 140 || r.TS[1] != 190 || r.TS[2] != 0 || r.Dev != event.MakeDev(7, 1) || r.Bytes != 4096 || r.CPU != 1 || r.Op != event.OpWrite {
		t.Errorf("record %+v", r)
	}
	if d.record(buf.Bytes()[:40], &r) {
		t.Error("short record decoded")
	}
}
