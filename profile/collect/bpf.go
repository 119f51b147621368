package collect

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"

	"github.com/dpperf/dpperf/profile/event"
)

// blockTracepoints lists the tracepoints bpf/block.c handles, in the order
// of its TP_* constants, with the program for each.
var blockTracepoints = []struct{ name, prog, btfProg string }{
	{"block_bio_queue", "bio_queue", "btf_bio_queue"},
	{"block_getrq", "getrq", "btf_getrq"},
	{"block_rq_insert", "rq_insert", "btf_rq_insert"},
	{"block_rq_issue", "rq_issue", "btf_rq_issue"},
	{"block_rq_complete", "rq_complete", "btf_rq_complete"},
}

// haveKernelBTF reports whether the kernel describes its types in BTF,
// which tp_btf programs need.
func haveKernelBTF() bool {
	_, err := os.Stat("/sys/kernel/btf/vmlinux")
	return err == nil
}

const noKind = 255

// BPF collects block events with BPF tracepoint programs.
type BPF struct {
	coll      *ebpf.Collection
	mu        sync.Mutex                  // guards links and stopped
	links     []link.Link                 // per program of attach, nil while detached
	attach    []func() (link.Link, error) // attaches each program
	first     int                         // index in attach of the program that starts records
	cmu       sync.Mutex                  // guards the duty cycle's goroutine (duty.go)
	duty      duty
	share     float64       // share of requests kept by hash (in the duty cycle's windows)
	cycleStop chan struct{} // closed to end the duty cycle; nil when it does not run
	cycleDone chan struct{} // closed when it has ended
	cycleErr  error         // an attach of the duty cycle that failed, returned by Next after the ring is drained
	cut       atomic.Int64  // records of the block programs in flight when they were detached, removed when attached again
	table     []byte        // a copy of the block programs' table of requests in flight; c.mu is held
	stopped   bool
	ring      *ring
	status    []Status
	once      sync.Once
	kinds     [5]uint8      // path event index per tracepoint
	queue     []event.Event // events of the last record not yet returned
	btf       bool          // tp_btf programs (else classic tracepoints)
	empty     bool          // programs that return at once (the attachment's own cost)
	stats     io.Closer     // keeps the kernel's run-time statistics on
	progs     []namedProg   // attached programs, for Cost
	nvme      bool          // records of bpf/nvme.c (else bpf/block.c)
	nkinds    [nvmeTPs]uint8
	kprobe    bool     // the nvme programs include a kprobe
	batch     []byte   // records of the current ring buffer sample not yet returned
	staged    bool     // the staging buffers were read after the ring ran dry
	clear     []string // maps of requests in flight, emptied when the programs are attached again
	paused    bool     // the programs were detached by Pause
}

// namedProg is an attached program and what it is attached to.
type namedProg struct {
	name string
	prog *ebpf.Program
}

// ProgramCost is how often one program ran and the time it took.
type ProgramCost struct {
	Name    string // the tracepoint
	Runs    uint64
	Runtime time.Duration
}

// Cost returns, per attached program in tracepoint order, how often it
// ran and the time it took; zero unless Config.Stats was set.
func (c *BPF) Cost() []ProgramCost {
	if c.coll == nil {
		return nil
	}
	var out []ProgramCost
	for _, p := range c.progs {
		if st, err := p.prog.Stats(); err == nil {
			out = append(out, ProgramCost{Name: p.name, Runs: st.RunCount, Runtime: st.Runtime})
		}
	}
	return out
}

// Programs says which kind of BPF programs are attached: "tp_btf" or
// "tracepoint".
func (c *BPF) Programs() string {
	if c.kprobe {
		return "tracepoint, kprobe"
	}
	if c.empty {
		return "tp_btf, empty"
	}
	if c.btf {
		return "tp_btf"
	}
	return "tracepoint"
}

// OpenBPF loads and attaches the programs the path needs: bpf/block.c
// for paths of block:* tracepoints only, bpf/nvme.c for paths of nvme:*,
// nvmet:*, block_rq_issue/complete tracepoints and a kprobe.
func OpenBPF(cfg Config) (c *BPF, err error) {
	if err := needRoot(); err != nil {
		return nil, err
	}
	if err := EnsureTracefs(); err != nil {
		return nil, err
	}
	for i := range cfg.Path.Events {
		if sys, _ := cfg.Path.Events[i].TraceName(); sys != "block" || cfg.Path.Events[i].Kprobe != "" {
			return openNVMe(cfg)
		}
	}
	return openBlock(cfg)
}

func openBlock(cfg Config) (c *BPF, err error) {
	spec, err := loadBlock()
	if err != nil {
		return nil, fmt.Errorf("load bpf spec: %w", err)
	}
	var kinds [5]uint8
	var layouts [5]blockLayout
	first, last := uint8(noKind), uint8(noKind)
	c = &BPF{}
	for i := range kinds {
		kinds[i] = noKind
	}
	for i := range cfg.Path.Events {
		e := &cfg.Path.Events[i]
		st := Status{Name: e.Name, Probe: e.Tracepoint}
		if e.Kprobe != "" {
			st.Probe = "kprobe:" + e.Kprobe
		}
		sys, name := e.TraceName()
		tp := -1
		for j, t := range blockTracepoints {
			if sys == "block" && name == t.name {
				tp = j
			}
		}
		if tp < 0 {
			return nil, fmt.Errorf("bpf collector: path %s needs %s, which it does not handle; use --collector tracefs", cfg.Path.Name, st.Probe)
		}
		l, err := blockLayoutOf(name)
		if err != nil {
			st.Reason = err.Error()
			c.status = append(c.status, st)
			continue
		}
		layouts[tp], kinds[tp] = l, uint8(i)
		if first == noKind {
			first = uint8(i)
		}
		last = uint8(i)
		st.Attached = true
		c.status = append(c.status, st)
	}
	if first == noKind || first == last {
		return nil, fmt.Errorf("bpf collector: fewer than two events of path %s can be observed", cfg.Path.Name)
	}
	d, share := dutyFor(cfg.Sample)
	consts := map[string]any{"kinds": kinds, "layouts": layouts, "first_kind": first, "last_kind": last,
		"sample_salt": rand.Uint64(), "sample_below": sampleBelow(share)}
	if err := configure(spec, cfg, consts); err != nil {
		return nil, err
	}
	c.clear = []string{"inflight", "occupied"}
	c.kinds = kinds
	switch cfg.Programs {
	case "", "auto":
		c.btf = haveKernelBTF()
	case "tp_btf":
		c.btf = true
	case "tracepoint":
	case "empty":
		c.btf, c.empty = true, true
	default:
		return nil, fmt.Errorf("bpf programs %q (want auto, tp_btf, tracepoint or empty)", cfg.Programs)
	}
	// Load only the program set in use, and only for the tracepoints the
	// path needs.
	empty := spec.Programs["btf_empty"]
	delete(spec.Programs, "btf_empty")
	for tp, t := range blockTracepoints {
		if c.btf || kinds[tp] == noKind {
			delete(spec.Programs, t.prog)
		}
		if !c.btf || kinds[tp] == noKind {
			delete(spec.Programs, t.btfProg)
		}
		if c.empty && kinds[tp] != noKind {
			p := empty.Copy()
			p.Name, p.AttachTo = t.btfProg, t.name
			spec.Programs[t.btfProg] = p
		}
	}
	if !c.empty {
		c.duty, c.share = d, share
	}
	if err := c.load(spec, cfg.Stats); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			c.Close()
		}
	}()
	for tp, t := range blockTracepoints {
		if kinds[tp] == noKind {
			continue
		}
		if kinds[tp] == first {
			c.first = len(c.attach)
		}
		prog := c.coll.Programs[t.prog]
		var attach func() (link.Link, error)
		if c.btf {
			prog = c.coll.Programs[t.btfProg]
			attach = func() (link.Link, error) { return link.AttachTracing(link.TracingOptions{Program: prog}) }
		} else {
			attach = func() (link.Link, error) { return link.Tracepoint("block", t.name, prog, nil) }
		}
		c.attach = append(c.attach, wrapAttach("block:"+t.name, attach))
		c.progs = append(c.progs, namedProg{t.name, prog})
	}
	if err := c.Resume(); err != nil {
		return nil, err
	}
	if err := c.startReader(); err != nil {
		return nil, err
	}
	return c, nil
}

// configure sets the programs' read-only constants: the filter of cfg and
// set, and sizes the ring buffer.
func configure(spec *ebpf.CollectionSpec, cfg Config, set map[string]any) error {
	set["filter_dev"], set["min_bytes"], set["max_bytes"], set["sample_n"] = uint32(cfg.Dev), cfg.MinBytes, cfg.MaxBytes, cfg.Sample
	if cfg.HasOp {
		set["filter_op"] = uint8(cfg.Op)
	}
	for name, v := range set {
		if err := spec.Variables[name].Set(v); err != nil {
			return fmt.Errorf("set bpf constant %s: %w", name, err)
		}
	}
	if cfg.BufferKB > 0 {
		size := uint32(os.Getpagesize())
		for size < uint32(cfg.BufferKB)*1024 {
			size <<= 1
		}
		spec.Maps["events"].MaxEntries = size
	}
	// Wake the reader only when the ring is a quarter full; below that
	// it polls (ring.go).
	if err := spec.Variables["wakeup_bytes"].Set(spec.Maps["events"].MaxEntries / 4); err != nil {
		return fmt.Errorf("set bpf constant wakeup_bytes: %w", err)
	}
	return nil
}

// load loads the programs of spec, with the kernel's run-time statistics
// on if stats is set.
func (c *BPF) load(spec *ebpf.CollectionSpec, stats bool) (err error) {
	if stats {
		if c.stats, err = ebpf.EnableStats(uint32(unix.BPF_STATS_RUN_TIME)); err != nil {
			return fmt.Errorf("enable bpf run-time statistics: %w", err)
		}
	}
	if c.coll, err = ebpf.NewCollection(spec); err != nil {
		if c.stats != nil {
			c.stats.Close()
		}
		return fmt.Errorf("load bpf programs: %w", err)
	}
	return nil
}

// startReader opens the ring buffer.
func (c *BPF) startReader() (err error) {
	c.ring, err = openRing(c.coll.Maps["events"])
	return err
}

// blockLayoutOf reads the record layout of a block tracepoint.
func blockLayoutOf(name string) (blockLayout, error) {
	f, err := tracepointFormat("block", name)
	if err != nil {
		return blockLayout{}, fmt.Errorf("tracepoint block:%s absent: %w", name, err)
	}
	l, why := layoutOf(f, spaceBlock)
	if why != "" {
		return blockLayout{}, fmt.Errorf("tracepoint block:%s %s", name, why)
	}
	return blockLayout(l), nil
}

// Next returns the next event; io.EOF after Stop once the ring buffer is
// drained. The kernel sends one record per finished request (in batches,
// see records.md); Next returns
// its events in path order.
func (c *BPF) Next() (event.Event, error) {
	for len(c.queue) == 0 {
		b, err := c.nextRecordBytes()
		if err != nil {
			return event.Event{}, err
		}
		if c.nvme {
			c.queue = decodeNVMeRecord(b, &c.nkinds, c.queue[:0])
		} else {
			c.queue = decodeBlockRecord(b, &c.kinds, c.queue[:0])
		}
	}
	ev := c.queue[0]
	c.queue = c.queue[1:]
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
		if c.nvme && decodeNVMeInto(b, &c.nkinds, r) {
			return nil
		}
		if !c.nvme && decodeBlockInto(b, &c.kinds, r) {
			return nil
		}
	}
}

// blockRecordLen is sizeof(struct event) of bpf/block.c.
const blockRecordLen = 64

// nextRecordBytes returns the next record: a ring buffer sample holds a
// batch of records of one CPU (records.md). When the ring is drained
// after Stop, the records still staged per CPU follow, then io.EOF.
func (c *BPF) nextRecordBytes() ([]byte, error) {
	size := blockRecordLen
	if c.nvme {
		size = nvmeRecordLen
	}
	for len(c.batch) < size {
		b, err := c.ring.next()
		if errors.Is(err, io.EOF) {
			c.mu.Lock()
			if c.cycleErr != nil {
				err = c.cycleErr
			}
			c.mu.Unlock()
		}
		if errors.Is(err, io.EOF) && !c.staged {
			c.staged = true
			b, err = c.readStaged()
		}
		if err != nil {
			return nil, err
		}
		c.batch = b
	}
	b := c.batch[:size]
	c.batch = c.batch[size:]
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

// decodeBlockInto fills r from struct event of bpf/block.c; false when
// the sample is too short.
func decodeBlockInto(b []byte, kinds *[5]uint8, r *event.Record) bool {
	if len(b) < blockRecordLen {
		return false
	}
	le := binary.LittleEndian
	*r = event.Record{
		Dev:   event.Dev(le.Uint32(b[48:])),
		Bytes: le.Uint32(b[52:]),
		CPU:   le.Uint16(b[56:]),
		Op:    event.Op(b[58]),
	}
	for tp, k := range kinds {
		if k != noKind {
			r.TS[k] = int64(le.Uint64(b[8*tp:]))
		}
	}
	return true
}

// decodeBlockRecord turns struct event of bpf/block.c (64 bytes, little
// endian on the architectures bpf2go built for) into the events of the
// request, in path order.
func decodeBlockRecord(b []byte, kinds *[5]uint8, out []event.Event) []event.Event {
	if len(b) < blockRecordLen {
		return out
	}
	le := binary.LittleEndian
	base := event.Event{
		Sector: le.Uint64(b[40:]),
		Dev:    event.Dev(le.Uint32(b[48:])),
		Bytes:  le.Uint32(b[52:]),
		CPU:    le.Uint16(b[56:]),
		Op:     event.Op(b[58]),
	}
	for tp := range kinds {
		ts := int64(le.Uint64(b[8*tp:]))
		if ts == 0 || kinds[tp] == noKind {
			continue
		}
		ev := base
		ev.TS, ev.Kind = ts, kinds[tp]
		// Insertion keeps path order (at most five events).
		i := len(out)
		out = append(out, ev)
		for ; i > 0 && out[i-1].Kind > ev.Kind; i-- {
			out[i] = out[i-1]
		}
		out[i] = ev
	}
	return out
}

// Status lists the path events and whether they are attached.
func (c *BPF) Status() []Status { return c.status }

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
	return int64(c.counter(2)) + c.cut.Load()
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

// Close detaches the programs and frees the maps. Events still in the
// ring buffer can not be read after Close; call Stop first to drain them.
func (c *BPF) Close() error {
	c.Stop()
	if c.ring != nil {
		c.ring.close()
	}
	if c.coll != nil {
		c.coll.Close()
	}
	if c.stats != nil {
		c.stats.Close()
	}
	return nil
}

// Stop detaches the programs so no new events arrive; Next then returns
// the events still buffered and io.EOF.
func (c *BPF) Stop() {
	c.once.Do(func() {
		c.cmu.Lock()
		c.stopCycle()
		c.mu.Lock()
		c.stopped = true
		c.detach()
		c.mu.Unlock()
		c.cmu.Unlock()
		if c.ring != nil {
			// A waiting reader returns what is buffered, then io.EOF.
			c.ring.stop()
		}
	})
}

// Pause detaches the programs and Resume attaches them again, so that a
// caller can run a workload without and with the collector in one
// process (`dpperf profile run --alternate`). Requests in flight across a
// pause are lost (their later events are not seen). With a duty cycle
// (duty.go) Resume starts it again with a window. Both do nothing after
// Stop.
func (c *BPF) Pause() {
	c.cmu.Lock()
	defer c.cmu.Unlock()
	c.stopCycle()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.attached() {
		c.paused = true
	}
	c.detach()
}

// clearTables zeroes the maps of c.clear through their memory mapping
// (they are BPF_F_MMAPABLE arrays); the programs are detached.
func (c *BPF) clearTables() error {
	for _, name := range c.clear {
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

// Resume attaches the programs; see Pause.
func (c *BPF) Resume() error {
	c.cmu.Lock()
	defer c.cmu.Unlock()
	c.mu.Lock()
	if c.stopped || c.attached() || c.cycleStop != nil {
		c.mu.Unlock()
		return nil
	}
	// Requests in flight at the pause lost their later events: their
	// entries would otherwise be taken for those of later requests.
	err := c.attachAll(c.paused)
	c.mu.Unlock()
	if err != nil || c.duty.period == 0 {
		return err
	}
	c.startCycle()
	return nil
}

// attachAll attaches every program, emptying the tables of requests in
// flight first if clear is set; c.mu is held and nothing is attached.
func (c *BPF) attachAll(clear bool) error {
	if clear {
		c.cut.Add(c.inFlight())
		if err := c.clearTables(); err != nil {
			return err
		}
	}
	// The program that starts records goes last, so that every request
	// it starts meets the programs of its later events.
	c.links = make([]link.Link, len(c.attach))
	for j := range c.attach {
		i := (c.first + 1 + j) % len(c.attach)
		l, err := c.attach[i]()
		if err != nil {
			c.detach()
			return err
		}
		c.links[i] = l
	}
	return nil
}

// attached says whether any program is attached; c.mu is held.
func (c *BPF) attached() bool {
	for _, l := range c.links {
		if l != nil {
			return true
		}
	}
	return false
}

// detachOne closes the link of program i, if attached; c.mu is held.
func (c *BPF) detachOne(i int) {
	if i < len(c.links) && c.links[i] != nil {
		c.links[i].Close()
		c.links[i] = nil
	}
}

// detach closes the links; c.mu is held.
func (c *BPF) detach() {
	for i := range c.links {
		c.detachOne(i)
	}
	c.links = nil
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
