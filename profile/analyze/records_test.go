package analyze

import (
	"context"
	"encoding/json"
	"io"
	"math/rand"
	"testing"

	"github.com/dpperf/dpperf/profile/event"
	"github.com/dpperf/dpperf/profile/path"
)

// recordSource replays whole records, as the BPF collector hands them over.
type recordSource struct {
	recs []event.Record
	i    int
}

func (s *recordSource) Next() (event.Event, error) { panic("Run must use NextRecord") }

func (s *recordSource) NextRecord(r *event.Record) error {
	if s.i == len(s.recs) {
		return io.EOF
	}
	*r = s.recs[s.i]
	s.i++
	return nil
}

// Records handed over whole must give the same profile as their events
// fed through the builder.
func TestRecordSourceMatchesEvents(t *testing.T) {
	p := builtin(t, "block")
	rng := rand.New(rand.NewSource(1))
	var evs []event.Event
	for i := 0; i < 2000; i++ {
		evs = append(evs, blockReq(uint64(i*8), int64(i)*50_000+1, rng.Int63n(5000)+100, rng.Int63n(3000)+50, rng.Int63n(200_000)+10_000)...)
	}
	b := NewBuilder(p, nil, 0)
	var recs []event.Record
	for _, ev := range evs {
		if r := b.Add(ev); r != nil {
			recs = append(recs, event.Record{TS: r.TS, Dev: r.Dev, Bytes: r.Bytes, CPU: r.CPU, Op: r.Op})
		}
	}
	opt := Options{Path: p, GroupBy: GroupBy{Type: true, Size: true}}
	a1, st1, err := Run(context.Background(), &sliceSource{evs: evs}, opt)
	if err != nil {
		t.Fatal(err)
	}
	a2, st2, err := Run(context.Background(), &recordSource{recs: recs}, opt)
	if err != nil {
		t.Fatal(err)
	}
	if st1.Records != st2.Records || st1.Events != st2.Events || st2.OutOfOrder != 0 {
		t.Errorf("stats from events %+v, from records %+v", st1, st2)
	}
	j1, _ := json.Marshal(Summarize(a1, p, 1))
	j2, _ := json.Marshal(Summarize(a2, p, 1))
	if string(j1) != string(j2) {
		t.Errorf("profiles differ:\n%s\n%s", j1, j2)
	}
}

func TestRecordSourceIntervals(t *testing.T) {
	p := builtin(t, "block")
	var recs []event.Record
	for i := 0; i < 30; i++ { // 30 requests, 100ms apart: three 1s intervals
		start := int64(i) * 100_000_000
		recs = append(recs, event.Record{TS: [path.MaxEvents]int64{start, start + 10, 0, start + 20, start + 30}, Dev: event.MakeDev(7, 0), Bytes: 4096, Op: event.OpRead})
	}
	var per []int64
	a, _, err := Run(context.Background(), &recordSource{recs: recs}, Options{Path: p, Interval: 1e9, OnInterval: func(a *Aggregator) { per = append(per, a.Records()) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(per) != 3 || per[0] != 10 || per[1] != 10 || per[2] != 10 {
		t.Errorf("records per interval %v, want [10 10 10]", per)
	}
	if a.Records() != 30 {
		t.Errorf("total %d records, want 30", a.Records())
	}
}
