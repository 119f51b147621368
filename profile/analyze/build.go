package analyze

import (
	"github.com/dpperf/dpperf/profile/event"
	"github.com/dpperf/dpperf/profile/path"
)

// openRecord is a record being built: the request's Record and what the
// Builder keeps to find and evict it.
type openRecord struct {
	event.Record
	seq   uint64 // start order, for eviction
	last  int64  // latest event time so far
	keys  [2]key // keys the record is indexed under
	nkeys uint8
	slot  int32 // index in Builder.byCPU pointing at this record, or -1
}

// key identifies a request among the open ones: up to two key fields of
// its events. Keys made of NVMe ids (qid, cid) live in a space of their own,
// marked by keySpaceNVMe in a; no sector reaches that bit. Two words without
// padding hash as one block.
type key struct {
	a, b uint64
}

const keySpaceNVMe = 1 << 63

// BuildStats counts how events turned into records.
type BuildStats struct {
	Events     int64 `json:"events"`
	Records    int64 `json:"records"`      // complete records emitted
	Restarted  int64 `json:"restarted"`    // open records dropped because their key started again
	Orphans    int64 `json:"orphans"`      // events with no open record (started before the trace, or merged bios)
	Evicted    int64 `json:"evicted"`      // open records dropped because the buffer was full
	OutOfOrder int64 `json:"out_of_order"` // events older than an earlier event of their record
	Open       int64 `json:"open"`         // records still open at the end (in flight)
	// PerEvent counts the events received per path event.
	PerEvent []int64 `json:"per_event"`
}

// Builder turns a stream of events into per-request records. It keeps at
// most maxOpen requests open; when full it drops the oldest (overwrite).
type Builder struct {
	p       *path.Path
	keyOf   [][]path.KeyField
	first   int // first and last event index that can be observed
	last    int
	open    map[key]*openRecord
	byCPU   []*openRecord        // cpu*MaxEvents+event -> latest record, for join
	joinTo  [path.MaxEvents]bool // events that others join
	maxOpen int
	seq     uint64
	stats   BuildStats
	free    []*openRecord
	pending []*openRecord // dropped during the current Add, reusable from the next
	fifo    []fifoEnt     // open records in start order, for eviction
	head    int
}

type fifoEnt struct {
	r   *openRecord
	seq uint64
}

// NewBuilder prepares a builder for p. observed lists, per event, whether
// the collector can see it (nil: all); records run from the first to the
// last observable event.
func NewBuilder(p *path.Path, observed []bool, maxOpen int) *Builder {
	if maxOpen <= 0 {
		maxOpen = 65536
	}
	b := &Builder{p: p, open: map[key]*openRecord{}, maxOpen: max(maxOpen, 16)}
	for i := range p.Events {
		if j := p.Events[i].Join; j != "" {
			b.joinTo[p.EventIndex(j)] = true
		}
	}
	b.first, b.last = -1, -1
	b.stats.PerEvent = make([]int64, len(p.Events))
	for i := range p.Events {
		b.keyOf = append(b.keyOf, p.EventKeyFields(i))
		if observed == nil || observed[i] {
			if b.first < 0 {
				b.first = i
			}
			b.last = i
		}
	}
	return b
}

// Stats returns the counts so far.
func (b *Builder) Stats() BuildStats {
	s := b.stats
	s.PerEvent = append([]int64(nil), b.stats.PerEvent...)
	s.Open = int64(len(b.open))
	return s
}

func (b *Builder) keyFor(kind int, ev *event.Event) key {
	var k key
	var space uint64
	for i, f := range b.keyOf[kind] {
		var v uint64
		switch f {
		case path.KeyDev:
			v = uint64(ev.Dev)
		case path.KeySector:
			v = ev.Sector
		case path.KeyQID:
			v, space = uint64(ev.QID), keySpaceNVMe
		case path.KeyCID:
			v, space = uint64(ev.CID), keySpaceNVMe
		}
		if i == 0 {
			k.a = v
		} else {
			k.b = v
		}
	}
	k.a |= space
	return k
}

// Add feeds one event. When it completes a record, Add returns it; the
// record is only valid until the next call (copy it to keep it).
func (b *Builder) Add(ev event.Event) *event.Record {
	b.stats.Events++
	b.free = append(b.free, b.pending...)
	b.pending = b.pending[:0]
	kind := int(ev.Kind)
	if kind >= len(b.p.Events) {
		b.stats.Orphans++
		return nil
	}
	b.stats.PerEvent[kind]++
	k := b.keyFor(kind, &ev)
	r := b.open[k]
	if kind == b.first {
		if r != nil {
			b.stats.Restarted++
			b.drop(r)
		}
		r = b.alloc()
		r.Dev, r.Bytes, r.CPU, r.Op = ev.Dev, ev.Bytes, ev.CPU, ev.Op
		r.QID, r.CID = ev.QID, ev.CID
		b.index(r, k)
	} else if r == nil {
		if j := b.p.Events[kind].Join; j != "" {
			if slot := int(ev.CPU)*path.MaxEvents + b.p.EventIndex(j); slot < len(b.byCPU) {
				r = b.byCPU[slot]
				if r != nil { // one join per passage of the joined event
					b.byCPU[slot], r.slot = nil, -1
				}
			}
			if r != nil {
				b.index(r, k)
			}
		}
		if r == nil {
			b.stats.Orphans++
			return nil
		}
	}
	if r.TS[kind] != 0 || r.last > ev.TS {
		b.stats.OutOfOrder++
	}
	r.TS[kind] = ev.TS
	r.last = max(r.last, ev.TS)
	if r.Bytes == 0 {
		r.Bytes = ev.Bytes
	}
	if r.Op == event.OpOther && ev.Op != event.OpOther {
		r.Op = ev.Op
	}
	if r.Dev == 0 {
		r.Dev = ev.Dev
	}
	if b.joinTo[kind] {
		slot := int(ev.CPU)*path.MaxEvents + kind
		for slot >= len(b.byCPU) {
			b.byCPU = append(b.byCPU, nil)
		}
		if old := b.byCPU[slot]; old != nil && old != r {
			old.slot = -1
		}
		if r.slot >= 0 && int(r.slot) != slot {
			b.byCPU[r.slot] = nil
		}
		b.byCPU[slot], r.slot = r, int32(slot)
	}
	if kind == b.last {
		b.drop(r)
		b.stats.Records++
		return &r.Record
	}
	return nil
}

func (b *Builder) alloc() *openRecord {
	if len(b.open) >= b.maxOpen {
		b.evictOldest()
	}
	var r *openRecord
	if n := len(b.free); n > 0 {
		r = b.free[n-1]
		b.free = b.free[:n-1]
		*r = openRecord{}
	} else {
		r = &openRecord{}
	}
	r.slot = -1
	b.seq++
	r.seq = b.seq
	if len(b.fifo)-b.head > 4*b.maxOpen {
		live := b.fifo[:0]
		for _, e := range b.fifo[b.head:] {
			if e.r.seq == e.seq && e.r.nkeys > 0 {
				live = append(live, e)
			}
		}
		clear(b.fifo[len(live):])
		b.fifo, b.head = live, 0
	}
	b.fifo = append(b.fifo, fifoEnt{r, r.seq})
	return r
}

func (b *Builder) index(r *openRecord, k key) {
	if r.nkeys < 2 {
		r.keys[r.nkeys] = k
		r.nkeys++
	}
	if old := b.open[k]; old != nil && old != r {
		b.stats.Restarted++
		b.drop(old)
	}
	b.open[k] = r
}

// drop removes r from the indexes; its memory is reused on a later alloc,
// so a returned record stays valid until the next Add.
func (b *Builder) drop(r *openRecord) {
	for i := 0; i < int(r.nkeys); i++ {
		if b.open[r.keys[i]] == r {
			delete(b.open, r.keys[i])
		}
	}
	if r.slot >= 0 {
		b.byCPU[r.slot] = nil
		r.slot = -1
	}
	r.nkeys = 0
	b.pending = append(b.pending, r)
}

// evictOldest drops the open record that started first.
func (b *Builder) evictOldest() {
	for b.head < len(b.fifo) {
		e := b.fifo[b.head]
		b.fifo[b.head] = fifoEnt{}
		b.head++
		if e.r.seq == e.seq && e.r.nkeys > 0 {
			b.stats.Evicted++
			b.drop(e.r)
			return
		}
	}
}

func (s *BuildStats) add(o *BuildStats) {
	s.Events += o.Events
	s.Records += o.Records
	s.Restarted += o.Restarted
	s.Orphans += o.Orphans
	s.Evicted += o.Evicted
	s.OutOfOrder += o.OutOfOrder
	s.Open += o.Open
	for i := range s.PerEvent {
		if i < len(o.PerEvent) {
			s.PerEvent[i] += o.PerEvent[i]
		}
	}
}
