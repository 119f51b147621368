package analyze

import (
	"context"
	"errors"
	"io"
	"runtime"
	"sync"
	"time"

	"github.com/dpperf/dpperf/profile/event"
	"github.com/dpperf/dpperf/profile/path"
)

// Source yields events in time order; io.EOF ends the stream.
type Source interface {
	Next() (event.Event, error)
}

// Options configure Run.
type Options struct {
	Path     *path.Path
	Observed []bool // per path event; nil: all observable
	Filter   Filter
	GroupBy  GroupBy
	MaxOpen  int // open requests kept at once (task buffer.records)
	Workers  int // aggregation goroutines; 0: GOMAXPROCS
	// Interval and OnInterval give online reports: OnInterval gets the
	// records completed in each Interval of trace time, then the
	// aggregator is reset.
	Interval   time.Duration
	OnInterval func(a *Aggregator)
	// Spill, when set, receives every analyzed record (task buffer
	// when_full: spill).
	Spill *RecordWriter
}

const batchSize = 2048

// Run reads src to the end (or until ctx is cancelled, which is not an
// error: the records so far are kept), builds records and aggregates them
// on several cores.
func Run(ctx context.Context, src Source, opt Options) (*Aggregator, BuildStats, error) {
	if rs, ok := src.(RecordSource); ok {
		return runRecords(ctx, rs, opt)
	}
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	if workers > 1 && opt.OnInterval == nil && opt.Spill == nil && !hasJoin(opt.Path) {
		return runSharded(ctx, src, opt, workers)
	}
	b := NewBuilder(opt.Path, opt.Observed, opt.MaxOpen)
	batches := make(chan []event.Record, workers*2)
	free := make(chan []event.Record, workers*2+2)
	get := func() []event.Record {
		select {
		case b := <-free:
			return b
		default:
			return make([]event.Record, 0, batchSize)
		}
	}
	aggs := make([]*Aggregator, workers)
	var wg sync.WaitGroup
	for w := range aggs {
		aggs[w] = NewAggregator(opt.GroupBy)
		wg.Add(1)
		go func(a *Aggregator) {
			defer wg.Done()
			for batch := range batches {
				for i := range batch {
					a.Add(&batch[i])
				}
				select {
				case free <- batch[:0]:
				default:
				}
			}
		}(aggs[w])
	}
	var iv *Aggregator
	var ivEnd int64
	if opt.Interval > 0 && opt.OnInterval != nil {
		iv = NewAggregator(opt.GroupBy)
	}
	filter := opt.Filter
	batch := get()
	var err error
	for n := 0; ; n++ {
		if n&1023 == 0 && ctx.Err() != nil {
			break
		}
		var ev event.Event
		ev, err = src.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			break
		}
		if iv != nil {
			if ivEnd == 0 {
				ivEnd = ev.TS + int64(opt.Interval)
			}
			for ev.TS >= ivEnd {
				opt.OnInterval(iv)
				iv.Reset()
				ivEnd += int64(opt.Interval)
			}
		}
		r := b.Add(ev)
		if r == nil || !filter.Keep(r) {
			continue
		}
		if iv != nil {
			iv.Add(r)
		}
		if opt.Spill != nil {
			opt.Spill.Write(r)
		}
		batch = append(batch, *r)
		if len(batch) == batchSize {
			batches <- batch
			batch = get()
		}
	}
	if len(batch) > 0 {
		batches <- batch
	}
	close(batches)
	wg.Wait()
	if iv != nil && iv.Records() > 0 {
		opt.OnInterval(iv)
	}
	for _, a := range aggs[1:] {
		aggs[0].Merge(a)
	}
	return aggs[0], b.Stats(), err
}

func hasJoin(p *path.Path) bool {
	for _, e := range p.Events {
		if e.Join != "" {
			return true
		}
	}
	return false
}

// runSharded splits events by correlation key over workers, each with its
// own Builder, Filter and Aggregator, so that record building also runs on
// every core. Events of one request always land on the same shard, in
// order. Paths whose events join across keys need the sequential builder.
func runSharded(ctx context.Context, src Source, opt Options, workers int) (*Aggregator, BuildStats, error) {
	const evBatch = 4096
	keyer := NewBuilder(opt.Path, opt.Observed, 16)
	chans := make([]chan []event.Event, workers)
	free := make(chan []event.Event, 4*workers)
	aggs := make([]*Aggregator, workers)
	stats := make([]BuildStats, workers)
	var wg sync.WaitGroup
	for w := range chans {
		chans[w] = make(chan []event.Event, 4)
		aggs[w] = NewAggregator(opt.GroupBy)
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			b := NewBuilder(opt.Path, opt.Observed, max(opt.MaxOpen/workers, 0))
			f := opt.Filter
			for batch := range chans[w] {
				for i := range batch {
					if r := b.Add(batch[i]); r != nil && f.Keep(r) {
						aggs[w].Add(r)
					}
				}
				select {
				case free <- batch[:0]:
				default:
				}
			}
			stats[w] = b.Stats()
		}(w)
	}
	bufs := make([][]event.Event, workers)
	get := func() []event.Event {
		select {
		case b := <-free:
			return b
		default:
			return make([]event.Event, 0, evBatch)
		}
	}
	for w := range bufs {
		bufs[w] = get()
	}
	var err error
	for n := 0; ; n++ {
		if n&1023 == 0 && ctx.Err() != nil {
			break
		}
		var ev event.Event
		ev, err = src.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			break
		}
		w := 0
		if int(ev.Kind) < len(opt.Path.Events) {
			k := keyer.keyFor(int(ev.Kind), &ev)
			h := (k.a*0x9e3779b97f4a7c15 ^ k.b*0xc2b2ae3d27d4eb4f) >> 17
			w = int(h % uint64(workers))
		}
		bufs[w] = append(bufs[w], ev)
		if len(bufs[w]) == evBatch {
			chans[w] <- bufs[w]
			bufs[w] = get()
		}
	}
	for w := range bufs {
		if len(bufs[w]) > 0 {
			chans[w] <- bufs[w]
		}
		close(chans[w])
	}
	wg.Wait()
	total := stats[0]
	for w := 1; w < workers; w++ {
		aggs[0].Merge(aggs[w])
		total.add(&stats[w])
	}
	return aggs[0], total, err
}
