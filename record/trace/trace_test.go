package trace

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/dpperf/dpperf/record/ctf"
)

// decode drains b and decodes its CTF events through a packet written by
// package ctf, so the encodings are checked against the metadata.
func decode(t *testing.T, b *Buffer) ([]ctf.Event, []CapturedPacket, uint64) {
	t.Helper()
	raw, dropped := b.Drain(nil)
	var events []byte
	var pkts []CapturedPacket
	Records(raw, func(kind byte, p []byte) {
		switch kind {
		case KindCTF:
			events = append(events, p...)
		case KindPacket:
			c, ok := DecodePacket(p)
			if !ok {
				t.Fatal("undecodable packet record")
			}
			pkts = append(pkts, c)
		}
	})
	var out bytes.Buffer
	s := ctf.NewStream(&out, "l", "t")
	if err := s.WritePacket(0, Now()+1, 0, events); err != nil {
		t.Fatal(err)
	}
	md := &ctf.Metadata{Classes: ctf.StandardClasses()}
	p, err := ctf.NewReader(&out, md).Next()
	if err != nil {
		t.Fatal(err)
	}
	return p.Events, pkts, dropped
}

func TestEventsDecode(t *testing.T) {
	tr := New()
	w := tr.Worker("pipeline/router", "ep")
	w.Checkpoint("off", 1, 2, Start) // no buffer yet: not recorded
	b := NewBuffer(BufferConfig{Size: 1 << 16, CTF: true, Packets: true, SnapLen: 4})
	w.Attach(b)
	w.Checkpoint("lookup", 7, 0xabc, ObjState)
	func() { defer w.Start("route", 3).End() }()
	w.RPCCall("trigger_once", "timer")
	w.RPCReturned("trigger_once", "timer")
	w.RPCDispatch("submit", "sender")
	w.RPCReply("submit", "sender")
	w.SignalSubmit(5)
	w.SignalReceive(6, 99)
	w.QueueFill("rx", 12, 1023)
	w.Checkpoint("nul\x00inside", 0, 0, Undef)
	w.Packet("uplink", Out, []byte{1, 2, 3, 4, 5, 6})
	evs, pkts, dropped := decode(t, b)
	if dropped != 0 {
		t.Errorf("dropped %d", dropped)
	}
	names := []string{"Checkpoint", "Checkpoint", "Checkpoint", "Rpc_call", "Rpc_returned", "Rpc_dispatch", "Rpc_reply", "Signal_submit", "Signal_receive", "Queue_fill", "Checkpoint"}
	if len(evs) != len(names) {
		t.Fatalf("%d events, want %d", len(evs), len(names))
	}
	for i, n := range names {
		if evs[i].Class.Name != n {
			t.Errorf("event %d is %s, want %s", i, evs[i].Class.Name, n)
		}
		if i > 0 && evs[i].Timestamp < evs[i-1].Timestamp {
			t.Errorf("event %d goes back in time", i)
		}
	}
	f := func(i int, name string) ctf.Value { v, _ := evs[i].Field(name); return v }
	if f(0, "data").Uint != 7 || f(0, "addr").Uint != 0xabc || f(0, "type").Uint != uint64(ObjState) || f(0, "name").Str != "lookup" {
		t.Errorf("checkpoint decoded as %+v", evs[0].Values)
	}
	if f(1, "type").Uint != uint64(Start) || f(2, "type").Uint != uint64(End) || f(2, "data").Uint != 3 {
		t.Errorf("scope decoded as %+v %+v", evs[1].Values, evs[2].Values)
	}
	if f(3, "name").Str != "trigger_once" || f(3, "peer").Str != "timer" {
		t.Errorf("rpc decoded as %+v", evs[3].Values)
	}
	if f(8, "number").Uint != 6 || f(8, "context").Uint != 99 || f(7, "number").Uint != 5 {
		t.Errorf("signals decoded as %+v %+v", evs[7].Values, evs[8].Values)
	}
	if f(9, "used").Uint != 12 || f(9, "capacity").Uint != 1023 || f(9, "name").Str != "rx" {
		t.Errorf("queue fill decoded as %+v", evs[9].Values)
	}
	if f(10, "name").Str != "nul?inside" {
		t.Errorf("NUL in a name not replaced: %q", f(10, "name").Str)
	}
	if len(pkts) != 1 || pkts[0].Iface != "uplink" || pkts[0].Dir != Out || pkts[0].OrigLen != 6 || !bytes.Equal(pkts[0].Data, []byte{1, 2, 3, 4}) {
		t.Errorf("packet decoded as %+v", pkts)
	}
}

func TestFullBufferDropsAndCounts(t *testing.T) {
	b := NewBuffer(BufferConfig{Size: MinBufferSize, CTF: true})
	w := New().Worker("l", "t")
	w.Attach(b)
	const total = 1000 // 27 bytes each: 151 fit
	for i := 0; i < total; i++ {
		w.Checkpoint("x", uint32(i), 0, Undef)
	}
	evs, _, dropped := decode(t, b)
	if uint64(len(evs))+dropped != total {
		t.Fatalf("kept %d + dropped %d != %d", len(evs), dropped, total)
	}
	if len(evs) != MinBufferSize/27 {
		t.Errorf("kept %d events, want %d", len(evs), MinBufferSize/27)
	}
	for i, e := range evs {
		if v, _ := e.Field("data"); v.Uint != uint64(i) {
			t.Fatalf("event %d carries data %d: the first events must be kept", i, v.Uint)
		}
	}
	// Space is free again after a drain.
	w.Checkpoint("x", 0, 0, Undef)
	if evs, _, dropped := decode(t, b); len(evs) != 1 || dropped != 0 {
		t.Errorf("after drain: %d events, %d dropped", len(evs), dropped)
	}
}

// TestConcurrentDrain runs a producer against a draining consumer (run it
// with -race): every event arrives once, in order, or is counted as dropped,
// with a buffer smaller and one larger than the step in which Consume frees.
func TestConcurrentDrain(t *testing.T) {
	for _, size := range []int{MinBufferSize, 4 * freeEvery} {
		t.Run(fmt.Sprint(size), func(t *testing.T) { concurrentDrain(t, size) })
	}
}

func concurrentDrain(t *testing.T, size int) {
	b := NewBuffer(BufferConfig{Size: size, CTF: true})
	w := New().Worker("l", "t")
	w.Attach(b)
	const total = 200000
	done := make(chan struct{})
	go func() {
		for i := 0; i < total; i++ {
			w.Checkpoint("wrapping name", uint32(i), uint64(i), Undef)
		}
		close(done)
	}()
	var got, dropped uint64
	last := -1
	var raw []byte
	check := func() {
		var d uint64
		raw, d = b.Drain(raw[:0])
		dropped += d
		Records(raw, func(kind byte, p []byte) {
			data := int(p[9]) | int(p[10])<<8 | int(p[11])<<16 | int(p[12])<<24
			if data <= last || string(p[22:len(p)-1]) != "wrapping name" {
				t.Fatalf("record %d after %d, name %q", data, last, p[22:])
			}
			last = data
			got++
		})
	}
	for finished := false; !finished; {
		select {
		case <-done:
			finished = true
		default:
		}
		check()
	}
	check()
	if got+dropped != total {
		t.Fatalf("got %d + dropped %d != %d", got, dropped, total)
	}
}

func TestTracerHook(t *testing.T) {
	tr := New()
	a := tr.Worker("a", "1")
	var mu sync.Mutex
	var hooked []*Worker
	before := tr.SetHook(func(w *Worker) { mu.Lock(); hooked = append(hooked, w); mu.Unlock() })
	b := tr.Worker("b", "2")
	if len(before) != 1 || before[0] != a || len(hooked) != 1 || hooked[0] != b {
		t.Fatalf("before %v hooked %v", before, hooked)
	}
	if ws := tr.Workers(); len(ws) != 2 {
		t.Fatalf("%d workers", len(ws))
	}
}

// TestConsumeFixesNames checks that NUL bytes the hot path leaves in
// checkpoint and queue names are replaced when the buffer is consumed, and
// that Consume hands out every record in order.
func TestConsumeFixesNames(t *testing.T) {
	b := NewBuffer(BufferConfig{Size: MinBufferSize, CTF: true})
	w := New().Worker("l", "t")
	w.Attach(b)
	w.Checkpoint("a\x00b\x00", 1, 0, Start)
	w.QueueFill("\x00rx", 1, 2)
	w.RPCCall("c\x00all", "peer")
	long := strings.Repeat("x", 70) + "\x00y\x00"
	w.Checkpoint(long, 1, 0, End)
	var names []string
	b.Consume(func(kind byte, p []byte) {
		switch p[0] {
		case 7:
			names = append(names, string(p[checkpointName:len(p)-1]))
		case 8:
			names = append(names, string(p[queueFillName:len(p)-1]))
		case 1:
			names = append(names, string(bytes.TrimRight(p[9:], "\x00")))
		}
	})
	want := []string{"a?b?", "?rx", "c?all\x00peer", strings.Repeat("x", 70) + "?y?"}
	if len(names) != len(want) {
		t.Fatalf("names %q, want %q", names, want)
	}
	for i := range want {
		if names[i] != want[i] {
			t.Errorf("name %d is %q, want %q", i, names[i], want[i])
		}
	}
	if b.Used() != 0 {
		t.Errorf("%d bytes left after Consume", b.Used())
	}
}

// TestConsumeFreesAsItGoes checks that a long drain gives space back to the
// producer before it ends: past freeEvery bytes, the first ones are free.
func TestConsumeFreesAsItGoes(t *testing.T) {
	b := NewBuffer(BufferConfig{Size: 8 * freeEvery, CTF: true})
	w := New().Worker("l", "t")
	w.Attach(b)
	for b.Used() < 6*freeEvery {
		w.Checkpoint("x", 0, 0, Undef)
	}
	full, seen, minUsed := b.Used(), 0, b.Used()
	b.Consume(func(kind byte, p []byte) {
		seen += len(p) + recordHeader
		minUsed = min(minUsed, b.Used())
	})
	if seen != full || b.Used() != 0 {
		t.Fatalf("consumed %d of %d bytes, %d left", seen, full, b.Used())
	}
	if minUsed > full-4*freeEvery {
		t.Errorf("%d of %d bytes still held during the drain, want at most %d", minUsed, full, full-4*freeEvery)
	}
}
