package kernel

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/dpperf/dpperf/record/ctf"
)

func TestWatermark(t *testing.T) {
	const now = 10 * clockGuard
	for _, c := range []struct {
		name      string
		now, prev uint64
		since     []uint64
		want      uint64
	}{
		{"no program running", now, 0, []uint64{0, 0}, now - clockGuard},
		{"a program stamping", now, 0, []uint64{0, now - 5*clockGuard}, now - 5*clockGuard},
		{"a program marked after the clock read", now, 0, []uint64{now + 1}, now - clockGuard},
		{"the lowest mark", now, 0, []uint64{now - 3*clockGuard, now - 4*clockGuard}, now - 4*clockGuard},
		{"never back", now, now - 2*clockGuard, []uint64{now - 4*clockGuard}, now - 2*clockGuard},
		{"early clock", clockGuard / 2, 0, nil, 0},
	} {
		if got := watermark(c.now, c.prev, c.since); got != c.want {
			t.Errorf("%s: watermark %d, want %d", c.name, got, c.want)
		}
	}
}

// packets decodes every packet of a stream written by pack.
func packets(t *testing.T, md *ctf.Metadata, b []byte) []*ctf.Packet {
	t.Helper()
	rd := ctf.NewReader(bytes.NewReader(b), md)
	var ps []*ctf.Packet
	for {
		p, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return ps
		}
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
}

// Samples arrive out of order and across drains; each packet holds those
// stamped before the watermark, in order, and the packets follow each
// other. A sample stamped before a written packet's end is counted as
// lost, not written out of place.
func TestPackKeepsOrder(t *testing.T) {
	c := ctf.EventClass{ID: ctf.FirstCustomID, Name: "t:e"}
	md := &ctf.Metadata{Classes: []ctf.EventClass{c}}
	var out bytes.Buffer
	s := &cpuStream{ctf: ctf.NewStream(&out, Label, "cpu0"), end: 100}
	add := func(ts ...uint64) {
		for _, v := range ts {
			s.pending = append(s.pending, sample{v, ctf.AppendEventHeader(nil, c.ID, v)})
		}
	}
	type step struct {
		arrive       []uint64
		upTo         uint64
		events, lost uint64
	}
	steps := []step{
		{[]uint64{150, 120, 300, 110}, 200, 3, 0}, // 300 waits for a later packet
		{[]uint64{250, 210}, 240, 1, 0},           // 250 and 300 wait
		{nil, 240, 0, 0},                          // nothing new: no packet
		{[]uint64{230, 260}, 400, 3, 1},           // 230 < 240 arrived late: lost
	}
	for i, st := range steps {
		add(st.arrive...)
		events, lost, err := s.pack(st.upTo)
		if err != nil {
			t.Fatal(err)
		}
		if events != st.events || lost != st.lost {
			t.Errorf("step %d: %d events, %d lost; want %d, %d", i, events, lost, st.events, st.lost)
		}
	}
	if s.late != 1 || len(s.pending) != 0 {
		t.Errorf("late %d, %d pending; want 1, 0", s.late, len(s.pending))
	}
	ps := packets(t, md, out.Bytes())
	var got []uint64
	end := uint64(100)
	for i, p := range ps {
		if p.Begin != end || p.End < p.Begin {
			t.Errorf("packet %d covers [%d, %d], previous ended at %d", i, p.Begin, p.End, end)
		}
		for _, e := range p.Events {
			if e.Timestamp < p.Begin || e.Timestamp >= p.End {
				t.Errorf("packet %d [%d, %d] holds an event at %d", i, p.Begin, p.End, e.Timestamp)
			}
			got = append(got, e.Timestamp)
		}
		end = p.End
	}
	want := []uint64{110, 120, 150, 210, 250, 260, 300}
	if len(got) != len(want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("events %v, want %v", got, want)
		}
	}
	if len(ps) != 3 || ps[2].Discarded != 1 {
		t.Errorf("%d packets, last discarded %d; want 3 packets, 1 discarded", len(ps), ps[len(ps)-1].Discarded)
	}
}

// A stream that only counts (the stream "missed") writes packets without
// events, with the running total of discarded events.
func TestPackLostOnly(t *testing.T) {
	var out bytes.Buffer
	s := &cpuStream{ctf: ctf.NewStream(&out, Label, MissedStream), end: 5}
	for i, n := range []uint64{3, 0, 4} {
		s.lost += n
		if _, lost, err := s.pack(uint64(10 * (i + 1))); err != nil || lost != n {
			t.Fatalf("pack %d: lost %d, %v; want %d", i, lost, err, n)
		}
	}
	ps := packets(t, &ctf.Metadata{}, out.Bytes())
	if len(ps) != 2 || ps[0].Discarded != 3 || ps[1].Discarded != 7 || ps[1].Begin != 10 || ps[1].End != 30 || ps[1].Thread != MissedStream {
		t.Errorf("packets %+v %+v", ps[0], ps[len(ps)-1])
	}
}
