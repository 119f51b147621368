package collect

import (
	"encoding/binary"
	"sync"
	"time"
)

// Sampling 1 of dutyMinSample or more requests on the block path attaches
// the programs only part of the time: for a window of dutyPeriod /
// dutyDivisor at the start of every dutyPeriod, keeping 1 of
// N / dutyDivisor requests by hash inside the windows (keep in
// bpf/block.c), so that 1 of N requests is still kept on average. An
// attached program costs every request that passes its tracepoint the
// dispatch, kept or not; a detached one costs nothing (docs/profile.md,
// "Hundreds of thousands of IOPS"). Attaching the block programs takes a
// few milliseconds (text patching and RCU waits in the kernel), which a
// longer period spreads thinner. dutyPeriod equals the 500 ms windows of
// `--alternate` that scripts/e2e/profile-overhead.sh uses, so that each
// of them holds one window.
const (
	dutyMinSample = 100
	dutyDivisor   = 10
	dutyPeriod    = 500 * time.Millisecond
)

// dutyPoll is how often the end of a window looks for requests still in
// flight.
const dutyPoll = time.Millisecond

// duty is when the programs are attached: a window of every period; a
// zero period means all the time.
type duty struct {
	window, period time.Duration
}

// dutyCycle runs the duty cycle: its goroutine detaches and attaches the
// programs (c.att) on its own while the collector runs.
type dutyCycle struct {
	duty                // zero: no duty cycle
	share float64       // share of requests kept by hash (in the windows)
	mu    sync.Mutex    // guards the goroutine; taken before c.att.mu
	stop  chan struct{} // closed to end the goroutine; nil when it does not run
	done  chan struct{} // closed when it has ended
}

// dutyFor returns the duty cycle for sampling 1 of n requests, and the
// share of requests to keep by hash inside its windows (1/n without a
// duty cycle).
func dutyFor(n uint32) (duty, float64) {
	if n < dutyMinSample {
		if n <= 1 {
			return duty{}, 1
		}
		return duty{}, 1 / float64(n)
	}
	return duty{window: dutyPeriod / dutyDivisor, period: dutyPeriod}, dutyDivisor / float64(n)
}

// sampleBelow turns a share of requests to keep into the bound on the
// 32-bit hash that keep in bpf/block.c compares with.
func sampleBelow(share float64) uint32 {
	if share >= 1 {
		return ^uint32(0)
	}
	return uint32(share * (1 << 32))
}

// startCycle starts the duty cycle's goroutine; the programs were just
// attached for its first window. c.duty.mu is held.
func (c *BPF) startCycle() {
	c.duty.stop, c.duty.done = make(chan struct{}), make(chan struct{})
	go c.cycle(c.duty.stop, c.duty.done)
}

// stopCycle ends the duty cycle's goroutine, if it runs, and waits for
// it; the programs may be attached after it. c.duty.mu is held.
func (c *BPF) stopCycle() {
	if c.duty.stop == nil {
		return
	}
	close(c.duty.stop)
	<-c.duty.done
	c.duty.stop, c.duty.done = nil, nil
}

// cycle runs the duty cycle, starting in a window: at the window's end it
// detaches the program of the path's first event, so that no request
// starts a record; the others stay attached until the requests that did
// have finished (drained) or for another window at most; then all are
// detached until the next period, which attaches them again with the
// tables emptied. So whether a request is recorded depends on when it
// started, not on how long it took, unless it took longer than a window.
func (c *BPF) cycle(stop, done chan struct{}) {
	defer close(done)
	begin := time.Now()
	for {
		if !sleep(stop, time.Until(begin.Add(c.duty.window))) {
			return
		}
		c.att.mu.Lock()
		c.detachOne(c.att.first)
		c.att.mu.Unlock()
		c.drain(stop, c.duty.window)
		c.att.mu.Lock()
		c.detach()
		c.att.mu.Unlock()
		begin = begin.Add(c.duty.period)
		if now := time.Now(); begin.Before(now) {
			begin = now // a late timer skips periods rather than crowding them
		}
		if !sleep(stop, time.Until(begin)) {
			return
		}
		c.att.mu.Lock()
		if !c.att.stopped {
			c.att.cycleErr = c.attachAll(true)
		}
		c.att.mu.Unlock()
		if c.att.cycleErr != nil {
			c.rd.ring.stop()
			return
		}
	}
}

// sleep waits d or until stop is closed; false when stop was closed.
func sleep(stop chan struct{}, d time.Duration) bool {
	if d <= 0 {
		select {
		case <-stop:
			return false
		default:
			return true
		}
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-stop:
		return false
	case <-t.C:
		return true
	}
}

// drain waits until the table of requests in flight holds no record, at
// most max. It reads the table through its memory mapping: a slot is in
// use while its dev field (offset 48 of struct event, records.md) is not
// zero.
func (c *BPF) drain(stop chan struct{}, max time.Duration) {
	end := time.Now().Add(max)
	for time.Now().Before(end) {
		c.att.mu.Lock()
		n := c.inFlight()
		c.att.mu.Unlock()
		if n == 0 {
			return
		}
		if !sleep(stop, dutyPoll) {
			return
		}
	}
}

// inFlight returns the number of records in the table of requests in
// flight of the block programs (0 for the nvme programs, or when the
// table cannot be read); c.att.mu is held.
func (c *BPF) inFlight() int64 {
	m := c.coll.Maps["inflight"]
	if m == nil {
		return 0
	}
	mem, err := m.Memory()
	if err != nil {
		return 0
	}
	if c.att.table == nil {
		c.att.table = make([]byte, mem.Size())
	}
	if _, err := mem.ReadAt(c.att.table, 0); err != nil {
		return 0
	}
	return inFlight(c.att.table)
}

// inFlight counts the records in a copy of the table of requests in
// flight: a slot is in use while its dev field (offset 48 of struct
// event, records.md) is not zero.
func inFlight(table []byte) int64 {
	var n int64
	for off := 0; off+blockRecordLen <= len(table); off += blockRecordLen {
		if binary.LittleEndian.Uint32(table[off+48:]) != 0 {
			n++
		}
	}
	return n
}

// Duty returns the window and period of the duty cycle (zero when the
// programs stay attached) and the share of requests kept by hash inside
// the windows.
func (c *BPF) Duty() (window, period time.Duration, share float64) {
	if c.duty.period == 0 {
		return 0, 0, 0
	}
	return c.duty.window, c.duty.period, c.duty.share
}
