package analyze

import (
	"github.com/dpperf/dpperf/profile/event"
	"github.com/dpperf/dpperf/profile/path"
)

// Filter selects records. Zero values select everything.
type Filter struct {
	Dev      event.Dev // 0: any
	Op       event.Op
	HasOp    bool
	MinBytes uint64
	MaxBytes uint64 // 0: unbounded
	Sample   uint32 // keep 1 of N completed records (0, 1: all)
	n        uint64
}

// Keep reports whether r passes the filter; it advances the sampler.
func (f *Filter) Keep(r *event.Record) bool {
	if f.Dev != 0 && r.Dev != f.Dev {
		return false
	}
	if f.HasOp && r.Op != f.Op {
		return false
	}
	if uint64(r.Bytes) < f.MinBytes || (f.MaxBytes != 0 && uint64(r.Bytes) > f.MaxBytes) {
		return false
	}
	if f.Sample > 1 {
		f.n++
		return f.n%uint64(f.Sample) == 1
	}
	return true
}

// GroupBy says which request attributes split the report into groups.
type GroupBy struct{ Type, Size, Session, CPU bool }

type groupKey struct {
	op    event.Op
	bytes uint32
	dev   event.Dev
	cpu   uint16
	all   bool
}

type groupAcc struct {
	total  Hist
	bytes  uint64
	stages [path.MaxEvents * path.MaxEvents]*Hist // index from*MaxEvents+to
}

// Aggregator folds records into per-group, per-stage histograms. Memory is
// bounded by groups × stages × 58 KiB, independent of the record count.
// Aggregators of disjoint record sets merge exactly.
type Aggregator struct {
	by          GroupBy
	groups      map[groupKey]*groupAcc
	first, last int64
	records     int64
	// The group of the last record: requests of one workload mostly
	// fall in one group, and the map lookup was a fifth of the cost of
	// Add on a live profile.
	lastKey groupKey
	lastG   *groupAcc
}

// NewAggregator returns an empty aggregator grouping by by.
func NewAggregator(by GroupBy) *Aggregator {
	return &Aggregator{by: by, groups: map[groupKey]*groupAcc{}}
}

func (a *Aggregator) keyOf(r *event.Record) groupKey {
	var k groupKey
	if a.by.Type {
		k.op = r.Op
	}
	if a.by.Size {
		k.bytes = r.Bytes
	}
	if a.by.Session {
		k.dev = r.Dev
	}
	if a.by.CPU {
		k.cpu = r.CPU
	}
	k.all = k == groupKey{}
	return k
}

// Add folds one complete record in.
func (a *Aggregator) Add(r *event.Record) {
	k := a.keyOf(r)
	g := a.lastG
	if g == nil || k != a.lastKey {
		if g = a.groups[k]; g == nil {
			g = &groupAcc{}
			a.groups[k] = g
		}
		a.lastKey, a.lastG = k, g
	}
	prev, first := -1, -1
	var start, end int64
	for i, t := range r.TS {
		if t == 0 {
			continue
		}
		if prev >= 0 {
			h := g.stages[prev*path.MaxEvents+i]
			if h == nil {
				h = &Hist{}
				g.stages[prev*path.MaxEvents+i] = h
			}
			h.Add(t - r.TS[prev])
		} else {
			first, start = i, t
		}
		prev, end = i, t
	}
	if first < 0 {
		return
	}
	g.total.Add(end - start)
	g.bytes += uint64(r.Bytes)
	if a.records == 0 || start < a.first {
		a.first = start
	}
	a.last = max(a.last, end)
	a.records++
}

// Merge folds o into a; o must group the same way.
func (a *Aggregator) Merge(o *Aggregator) {
	for k, og := range o.groups {
		g := a.groups[k]
		if g == nil {
			g = &groupAcc{}
			a.groups[k] = g
		}
		g.total.Merge(&og.total)
		g.bytes += og.bytes
		for i, h := range og.stages {
			if h == nil {
				continue
			}
			if g.stages[i] == nil {
				g.stages[i] = &Hist{}
			}
			g.stages[i].Merge(h)
		}
	}
	if o.records > 0 {
		if a.records == 0 || o.first < a.first {
			a.first = o.first
		}
		a.last = max(a.last, o.last)
	}
	a.records += o.records
}

// Records returns how many records were added.
func (a *Aggregator) Records() int64 { return a.records }

// Reset empties the aggregator (online mode, per interval).
func (a *Aggregator) Reset() {
	a.groups = map[groupKey]*groupAcc{}
	a.first, a.last, a.records = 0, 0, 0
	a.lastG = nil
}
