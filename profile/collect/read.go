package collect

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/dpperf/dpperf/profile/event"
)

// reader hands out the records of the programs' ring buffer one at a
// time, as events or whole.
type reader struct {
	ring   *ring
	dec    decoder
	batch  []byte        // records of the current ring buffer sample not yet returned
	staged bool          // the staging buffers were read after the ring ran dry
	queue  []event.Event // events of the last record not yet returned
}

// Next returns the next event; io.EOF after Stop once the ring buffer is
// drained. The kernel sends one record per finished request (in batches,
// see records.md); Next returns
// its events in path order.
func (c *BPF) Next() (event.Event, error) {
	r := &c.rd
	for len(r.queue) == 0 {
		b, err := c.nextRecordBytes()
		if err != nil {
			return event.Event{}, err
		}
		r.queue = r.dec.events(b, r.queue[:0])
	}
	ev := r.queue[0]
	r.queue = r.queue[1:]
	return ev, nil
}

// NextRecord returns the next finished request as a whole; io.EOF after
// Stop once the ring buffer is drained. It and Next must not be mixed.
func (c *BPF) NextRecord(r *event.Record) error {
	for {
		b, err := c.nextRecordBytes()
		if err != nil {
			return err
		}
		if c.rd.dec.record(b, r) {
			return nil
		}
	}
}

// nextRecordBytes returns the next record: a ring buffer sample holds a
// batch of records of one CPU (records.md). When the ring is drained
// after Stop, the records still staged per CPU follow, then io.EOF.
func (c *BPF) nextRecordBytes() ([]byte, error) {
	r := &c.rd
	size := r.dec.layout.size
	for len(r.batch) < size {
		b, err := r.ring.next()
		if errors.Is(err, io.EOF) {
			c.att.mu.Lock()
			if c.att.cycleErr != nil {
				err = c.att.cycleErr
			}
			c.att.mu.Unlock()
		}
		if errors.Is(err, io.EOF) && !r.staged {
			r.staged = true
			b, err = c.readStaged()
		}
		if err != nil {
			return nil, err
		}
		r.batch = b
	}
	b := r.batch[:size]
	r.batch = r.batch[size:]
	return b, nil
}

// readStaged returns the records the programs staged but did not send,
// of all CPUs. It is called once the programs are detached. block.c and
// nvme.c share struct stage (common.h), so one Go type reads either. A
// failed read is an error: the records it would have returned cannot be
// counted as lost, since nobody knows how many there were.
func (c *BPF) readStaged() ([]byte, error) {
	if c.coll == nil {
		return nil, nil
	}
	var per []blockStage
	if err := c.coll.Maps["staged"].Lookup(uint32(0), &per); err != nil {
		return nil, fmt.Errorf("reading the records staged per CPU: %w", err)
	}
	var out []byte
	for _, s := range per {
		for _, w := range s.Buf[:min(int(s.Words), len(s.Buf))] {
			out = binary.LittleEndian.AppendUint64(out, w)
		}
	}
	return out, nil
}

// Lost returns the events dropped because the ring buffer was full.
func (c *BPF) Lost() int64 {
	return int64(c.counter(0))
}

// Overwritten returns the requests whose in-kernel record was removed or
// overwritten before it completed: the records of bios merged into another
// request (removed when it is issued), of requests whose later events were
// not seen (reused after a second), of the oldest request of a full set of
// the table, of the sector of a request the filter rejected, and of
// requests in flight when the programs were detached (Pause, or the end
// of a window of the duty cycle) and attached again.
func (c *BPF) Overwritten() int64 {
	return int64(c.counter(2)) + c.att.cut.Load()
}

// Filtered returns the requests the in-kernel filter rejected.
func (c *BPF) Filtered() int64 {
	return int64(c.counter(3))
}

func (c *BPF) counter(idx uint32) uint64 {
	if c.coll == nil {
		return 0
	}
	var per []uint64
	if err := c.coll.Maps["counters"].Lookup(idx, &per); err != nil {
		return 0
	}
	var sum uint64
	for _, v := range per {
		sum += v
	}
	return sum
}
