package analyze

import (
	"context"
	"errors"
	"io"

	"github.com/dpperf/dpperf/profile/event"
)

// RecordSource is a Source that also hands over whole requests: the BPF
// collector assembles each request in the kernel, so Run takes its
// records as they are instead of splitting them into events and building
// them again.
type RecordSource interface {
	Source
	// NextRecord fills r with the next finished request (TS, Dev, Bytes,
	// CPU and Op); io.EOF ends the stream.
	NextRecord(r *event.Record) error
}

// runRecords is Run for a RecordSource: one goroutine, each record
// aggregated once. At tens of thousands of records per second handing
// batches to other cores would cost more than it saves.
func runRecords(ctx context.Context, src RecordSource, opt Options) (*Aggregator, BuildStats, error) {
	n := len(opt.Path.Events)
	stats := BuildStats{PerEvent: make([]int64, n)}
	total := NewAggregator(opt.GroupBy)
	// With intervals, records go into the interval's aggregator, which is
	// merged into the total when the interval ends.
	acc := total
	if opt.Interval > 0 && opt.OnInterval != nil {
		acc = NewAggregator(opt.GroupBy)
	}
	var ivEnd int64
	endInterval := func() {
		opt.OnInterval(acc)
		total.Merge(acc)
		acc.Reset()
	}
	filter := opt.Filter
	var r event.Record
	var err error
	for i := 0; ; i++ {
		if i&1023 == 0 && ctx.Err() != nil {
			break
		}
		if err = src.NextRecord(&r); err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			break
		}
		var end int64
		for k := 0; k < n; k++ {
			if t := r.TS[k]; t != 0 {
				stats.Events++
				stats.PerEvent[k]++
				if t < end {
					stats.OutOfOrder++
				}
				end = max(end, t)
			}
		}
		stats.Records++
		if acc != total {
			if ivEnd == 0 {
				ivEnd = end + int64(opt.Interval)
			}
			for end >= ivEnd {
				endInterval()
				ivEnd += int64(opt.Interval)
			}
		}
		if !filter.Keep(&r) {
			continue
		}
		acc.Add(&r)
		if opt.Spill != nil {
			opt.Spill.Write(&r)
		}
	}
	if acc != total && acc.Records() > 0 {
		endInterval()
	}
	return total, stats, err
}
