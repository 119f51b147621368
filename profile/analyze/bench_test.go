package analyze

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/dpperf/dpperf/profile/event"
)

func benchEvents(n int) []event.Event {
	rng := rand.New(rand.NewPCG(5, 6))
	evs := make([]event.Event, 0, 4*n)
	var t int64
	for i := 0; i < n; i++ {
		t += 1000
		evs = append(evs, blockReq(uint64(i*8), t, rng.Int64N(3000), rng.Int64N(3000), 20_000+rng.Int64N(100_000))...)
	}
	return evs
}

// BenchmarkRun measures the whole analysis: events → records → per-stage
// histograms on GOMAXPROCS workers. Reported: records/s.
func BenchmarkRun(b *testing.B) {
	p := builtin(b, "block")
	evs := benchEvents(250_000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, _, err := Run(context.Background(), &sliceSource{evs: evs}, Options{Path: p, GroupBy: GroupBy{Type: true, Size: true}}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(250_000*b.N)/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkAggregate measures folding finished records into histograms,
// the part that shards over cores.
func BenchmarkAggregate(b *testing.B) {
	p := builtin(b, "block")
	evs := benchEvents(100_000)
	bl := NewBuilder(p, nil, 1024)
	var recs []event.Record
	for _, ev := range evs {
		if r := bl.Add(ev); r != nil {
			recs = append(recs, *r)
		}
	}
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		a := NewAggregator(GroupBy{Type: true, Size: true})
		i := 0
		for pb.Next() {
			a.Add(&recs[i%len(recs)])
			i++
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkRunRecords measures the live BPF path: whole records from the
// collector → per-stage histograms, on one goroutine, with one-second
// intervals as `profile run` uses them. Reported: records/s.
func BenchmarkRunRecords(b *testing.B) {
	p := builtin(b, "block")
	bl := NewBuilder(p, nil, 0)
	var recs []event.Record
	for _, ev := range benchEvents(250_000) {
		if r := bl.Add(ev); r != nil {
			recs = append(recs, event.Record{TS: r.TS, Dev: r.Dev, Bytes: r.Bytes, CPU: r.CPU, Op: r.Op})
		}
	}
	opt := Options{Path: p, GroupBy: GroupBy{Type: true, Size: true}, Interval: 1e8, OnInterval: func(*Aggregator) {}}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, _, err := Run(context.Background(), &recordSource{recs: recs}, opt); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(recs)*b.N)/b.Elapsed().Seconds(), "records/s")
}
