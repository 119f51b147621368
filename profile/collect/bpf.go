package collect

import (
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"sync"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"

	"github.com/dpperf/dpperf/profile/path"
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

// ProgramSet says which BPF programs a collector attached.
type ProgramSet uint8

// Program sets.
const (
	ProgramsTracepoint       ProgramSet = iota // classic tracepoint programs
	ProgramsTPBTF                              // tp_btf programs, reading the kernel's structs through BTF
	ProgramsEmpty                              // tp_btf programs that return at once: what attaching costs; no records
	ProgramsTracepointKprobe                   // classic tracepoint programs and a kprobe (bpf/nvme.c)
)

func (s ProgramSet) String() string {
	switch s {
	case ProgramsTPBTF:
		return "tp_btf"
	case ProgramsEmpty:
		return "tp_btf, empty"
	case ProgramsTracepointKprobe:
		return "tracepoint, kprobe"
	}
	return "tracepoint"
}

// btf says whether the set's programs are tp_btf programs.
func (s ProgramSet) btf() bool { return s == ProgramsTPBTF || s == ProgramsEmpty }

// blockProgramSet turns Config.Programs into the set of block programs
// to load.
func blockProgramSet(name string) (ProgramSet, error) {
	switch name {
	case "", "auto":
		if haveKernelBTF() {
			return ProgramsTPBTF, nil
		}
		return ProgramsTracepoint, nil
	case "tp_btf":
		return ProgramsTPBTF, nil
	case "tracepoint":
		return ProgramsTracepoint, nil
	case "empty":
		return ProgramsEmpty, nil
	}
	return 0, fmt.Errorf("bpf programs %q (want auto, tp_btf, tracepoint or empty)", name)
}

// BPF collects path events with BPF programs. It loads them (this file),
// attaches and detaches them (attach.go; duty.go for the duty cycle),
// reads their ring buffer (read.go, ring.go) and decodes its records
// (decode.go).
type BPF struct {
	coll   *ebpf.Collection
	set    ProgramSet
	status []Status
	progs  []namedProg // attached programs, for Cost
	stats  io.Closer   // keeps the kernel's run-time statistics on
	att    attachment
	duty   dutyCycle
	rd     reader
	once   sync.Once // Stop
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

// Programs says which BPF programs are attached.
func (c *BPF) Programs() ProgramSet { return c.set }

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

// blockSetup is what openBlock derives from a path before loading
// anything.
type blockSetup struct {
	kinds       [5]uint8 // path event index per tracepoint
	layouts     [5]blockLayout
	first, last uint8
	status      []Status
}

// planBlock maps the path's events onto bpf/block.c.
func planBlock(p *path.Path) (*blockSetup, error) {
	s := &blockSetup{first: noKind, last: noKind}
	for i := range s.kinds {
		s.kinds[i] = noKind
	}
	for i := range p.Events {
		e := &p.Events[i]
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
			return nil, fmt.Errorf("bpf collector: path %s needs %s, which it does not handle; use --collector tracefs", p.Name, st.Probe)
		}
		l, err := blockLayoutOf(name)
		if err != nil {
			st.Reason = err.Error()
			s.status = append(s.status, st)
			continue
		}
		s.layouts[tp], s.kinds[tp] = l, uint8(i)
		if s.first == noKind {
			s.first = uint8(i)
		}
		s.last = uint8(i)
		st.Attached = true
		s.status = append(s.status, st)
	}
	if s.first == noKind || s.first == s.last {
		return nil, fmt.Errorf("bpf collector: fewer than two events of path %s can be observed", p.Name)
	}
	return s, nil
}

// keepBlockPrograms removes from spec the programs not in use: those of
// the other set and those of tracepoints the path does not need. Empty
// programs take the place of the tp_btf ones.
func keepBlockPrograms(spec *ebpf.CollectionSpec, set ProgramSet, kinds *[5]uint8) {
	empty := spec.Programs["btf_empty"]
	delete(spec.Programs, "btf_empty")
	for tp, t := range blockTracepoints {
		if set.btf() || kinds[tp] == noKind {
			delete(spec.Programs, t.prog)
		}
		if !set.btf() || kinds[tp] == noKind {
			delete(spec.Programs, t.btfProg)
		}
		if set == ProgramsEmpty && kinds[tp] != noKind {
			p := empty.Copy()
			p.Name, p.AttachTo = t.btfProg, t.name
			spec.Programs[t.btfProg] = p
		}
	}
}

func openBlock(cfg Config) (*BPF, error) {
	spec, err := loadBlock()
	if err != nil {
		return nil, fmt.Errorf("load bpf spec: %w", err)
	}
	s, err := planBlock(cfg.Path)
	if err != nil {
		return nil, err
	}
	d, share := dutyFor(cfg.Sample)
	consts := map[string]any{"kinds": s.kinds, "layouts": s.layouts, "first_kind": s.first, "last_kind": s.last,
		"sample_salt": rand.Uint64(), "sample_below": sampleBelow(share)}
	if err := configure(spec, cfg, consts); err != nil {
		return nil, err
	}
	set, err := blockProgramSet(cfg.Programs)
	if err != nil {
		return nil, err
	}
	c := &BPF{set: set, status: s.status}
	c.att.clear = []string{"inflight", "occupied"}
	c.rd.dec = decoder{&blockRecord, s.kinds[:]}
	// Load only the program set in use, and only for the tracepoints the
	// path needs.
	keepBlockPrograms(spec, set, &s.kinds)
	if set != ProgramsEmpty {
		c.duty.duty, c.duty.share = d, share
	}
	if err := c.load(spec, cfg.Stats); err != nil {
		return nil, err
	}
	for tp, t := range blockTracepoints {
		if s.kinds[tp] == noKind {
			continue
		}
		if s.kinds[tp] == s.first {
			c.att.first = len(c.att.attach)
		}
		prog := c.coll.Programs[t.prog]
		var attach func() (link.Link, error)
		if set.btf() {
			prog = c.coll.Programs[t.btfProg]
			attach = func() (link.Link, error) { return link.AttachTracing(link.TracingOptions{Program: prog}) }
		} else {
			attach = func() (link.Link, error) { return link.Tracepoint("block", t.name, prog, nil) }
		}
		c.addProgram(t.name, "block:"+t.name, prog, attach)
	}
	return c.start()
}

// addProgram adds prog, attached to what by attach, to the programs that
// Resume attaches; name is the tracepoint for Cost.
func (c *BPF) addProgram(name, what string, prog *ebpf.Program, attach func() (link.Link, error)) {
	c.att.attach = append(c.att.attach, wrapAttach(what, attach))
	c.progs = append(c.progs, namedProg{name, prog})
}

// start attaches the programs and opens the ring buffer; on failure it
// closes c.
func (c *BPF) start() (*BPF, error) {
	err := c.Resume()
	if err == nil {
		c.rd.ring, err = openRing(c.coll.Maps["events"])
	}
	if err != nil {
		c.Close()
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

// Status lists the path events and whether they are attached.
func (c *BPF) Status() []Status { return c.status }

// Close detaches the programs and frees the maps. Events still in the
// ring buffer can not be read after Close; call Stop first to drain them.
func (c *BPF) Close() error {
	c.Stop()
	if c.rd.ring != nil {
		c.rd.ring.close()
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
		c.duty.mu.Lock()
		c.stopCycle()
		c.att.mu.Lock()
		c.att.stopped = true
		c.detach()
		c.att.mu.Unlock()
		c.duty.mu.Unlock()
		if c.rd.ring != nil {
			// A waiting reader returns what is buffered, then io.EOF.
			c.rd.ring.stop()
		}
	})
}
