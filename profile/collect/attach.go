package collect

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/cilium/ebpf/link"
)

// attachment is the programs' links: made and undone together by Resume
// and Pause, in part by the duty cycle (duty.go), and for good by Stop.
type attachment struct {
	mu       sync.Mutex                  // guards the fields below but cut
	links    []link.Link                 // per program of attach, nil while detached
	attach   []func() (link.Link, error) // attaches each program
	first    int                         // index in attach of the program that starts records
	stopped  bool
	paused   bool         // the programs were detached by Pause
	clear    []string     // maps of requests in flight, emptied when the programs are attached again
	table    []byte       // a copy of the block programs' table of requests in flight
	cycleErr error        // an attach of the duty cycle that failed, returned by Next after the ring is drained
	cut      atomic.Int64 // records of the block programs in flight when they were detached, removed when attached again
}

// Pause detaches the programs and Resume attaches them again, so that a
// caller can run a workload without and with the collector in one
// process (`dpperf profile run --alternate`). Requests in flight across a
// pause are lost (their later events are not seen). With a duty cycle
// (duty.go) Resume starts it again with a window. Both do nothing after
// Stop.
func (c *BPF) Pause() {
	c.duty.mu.Lock()
	defer c.duty.mu.Unlock()
	c.stopCycle()
	c.att.mu.Lock()
	defer c.att.mu.Unlock()
	if c.attached() {
		c.att.paused = true
	}
	c.detach()
}

// Resume attaches the programs; see Pause.
func (c *BPF) Resume() error {
	c.duty.mu.Lock()
	defer c.duty.mu.Unlock()
	c.att.mu.Lock()
	if c.att.stopped || c.attached() || c.duty.stop != nil {
		c.att.mu.Unlock()
		return nil
	}
	// Requests in flight at the pause lost their later events: their
	// entries would otherwise be taken for those of later requests.
	err := c.attachAll(c.att.paused)
	c.att.mu.Unlock()
	if err != nil || c.duty.period == 0 {
		return err
	}
	c.startCycle()
	return nil
}

// clearTables zeroes the maps of c.att.clear through their memory mapping
// (they are BPF_F_MMAPABLE arrays); the programs are detached.
func (c *BPF) clearTables() error {
	for _, name := range c.att.clear {
		mem, err := c.coll.Maps[name].Memory()
		if err != nil {
			return fmt.Errorf("map %s: %w", name, err)
		}
		if _, err := mem.WriteAt(make([]byte, mem.Size()), 0); err != nil {
			return fmt.Errorf("clear map %s: %w", name, err)
		}
	}
	return nil
}

// attachAll attaches every program, emptying the tables of requests in
// flight first if clear is set; c.att.mu is held and nothing is attached.
func (c *BPF) attachAll(clear bool) error {
	if clear {
		c.att.cut.Add(c.inFlight())
		if err := c.clearTables(); err != nil {
			return err
		}
	}
	// The program that starts records goes last, so that every request
	// it starts meets the programs of its later events.
	a := &c.att
	a.links = make([]link.Link, len(a.attach))
	for j := range a.attach {
		i := (a.first + 1 + j) % len(a.attach)
		l, err := a.attach[i]()
		if err != nil {
			c.detach()
			return err
		}
		a.links[i] = l
	}
	return nil
}

// attached says whether any program is attached; c.att.mu is held.
func (c *BPF) attached() bool {
	for _, l := range c.att.links {
		if l != nil {
			return true
		}
	}
	return false
}

// detachOne closes the link of program i, if attached; c.att.mu is held.
func (c *BPF) detachOne(i int) {
	if i < len(c.att.links) && c.att.links[i] != nil {
		c.att.links[i].Close()
		c.att.links[i] = nil
	}
}

// detach closes the links; c.att.mu is held.
func (c *BPF) detach() {
	for i := range c.att.links {
		c.detachOne(i)
	}
	c.att.links = nil
}

// wrapAttach names the attach point in attach's error.
func wrapAttach(what string, attach func() (link.Link, error)) func() (link.Link, error) {
	return func() (link.Link, error) {
		l, err := attach()
		if err != nil {
			return nil, fmt.Errorf("attach %s: %w", what, err)
		}
		return l, nil
	}
}
