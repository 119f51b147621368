package kernel

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"github.com/cilium/ebpf/ringbuf"
	"github.com/cilium/ebpf/rlimit"

	"github.com/dpperf/dpperf/record/ctf"
	"github.com/dpperf/dpperf/record/trace"
)

// Label is the component label of kernel streams.
const Label = "kernel"

// Options configure a kernel recording.
type Options struct {
	Dir       string        // component directory (created), e.g. <recording>/kernel
	Period    time.Duration // drain period (default 100ms)
	RingSize  int           // ring buffer bytes, a power of two (default 8 MiB)
	ClockUUID string        // clock shared with the other traces of the recording
	// ClockOffsetNs turns monotonic ns into ns since the epoch.
	ClockOffsetNs int64
}

// Stats count what a kernel recording wrote. Lost counts every event the
// recording does not hold: Missed and Late are parts of it.
type Stats struct {
	Dir         string   `json:"dir"`
	Tracepoints []string `json:"tracepoints"`
	Events      uint64   `json:"events"`
	Lost        uint64   `json:"events_discarded"`
	// Missed counts the tracepoint hits the kernel did not run the
	// recorder's program for, because a BPF program (usually one of the
	// recorder's, interrupted by the hit) was already running on that CPU.
	Missed uint64 `json:"missed"`
	// Late counts samples that arrived after their stream's packets had
	// passed their time; the watermark rules them out.
	Late uint64 `json:"late"`
}

// MissedStream is the name of the stream that counts the Missed events in
// its packets' events_discarded: the kernel counts them per program, not
// per CPU, so no CPU stream can. It holds no events.
const MissedStream = "missed"

// Recorder records a set of tracepoints.
type Recorder struct {
	formats []*Format
	classes []ctf.EventClass
	ring    *ebpf.Map
	slots   *ebpf.Map // per-CPU cpuSlot
	progs   []*ebpf.Program
	links   []link.Link
	rd      *ringbuf.Reader
	opts    Options
	start   uint64 // monotonic ns before the programs were attached
	streams map[uint32]*cpuStream
	missed  *cpuStream
	lostSum []uint64 // per CPU, ring losses counted so far
	// unwritten counts samples whose stream file could not be created.
	unwritten uint64
	misses    uint64 // the programs' recursion misses counted so far
	mark      uint64 // the watermark
	stop      atomic.Bool
	stopped   bool
	done      chan error
	mu        sync.Mutex
	stats     Stats
}

// Open reads the formats of the tracepoints ("category:name") and loads
// their programs and maps; nothing is attached yet.
func Open(tracepoints []string) (*Recorder, error) {
	if len(tracepoints) == 0 {
		return nil, errors.New("no tracepoint given")
	}
	if len(tracepoints) > 255-ctf.FirstCustomID {
		return nil, fmt.Errorf("%d tracepoints: at most %d", len(tracepoints), 255-ctf.FirstCustomID)
	}
	r := &Recorder{streams: map[uint32]*cpuStream{}}
	for i, tp := range tracepoints {
		f, err := ReadFormat(tp)
		if err != nil {
			return nil, err
		}
		r.formats = append(r.formats, f)
		r.classes = append(r.classes, f.Class(uint8(ctf.FirstCustomID+i)))
		r.stats.Tracepoints = append(r.stats.Tracepoints, tp)
	}
	_ = rlimit.RemoveMemlock()
	return r, nil
}

// Start creates the directory and metadata, loads and attaches the
// programs and starts draining.
func (r *Recorder) Start(opts Options) (err error) {
	if opts.Period <= 0 {
		opts.Period = 100 * time.Millisecond
	}
	if opts.RingSize <= 0 {
		opts.RingSize = 8 << 20
	}
	r.opts, r.stats.Dir = opts, opts.Dir
	defer func() {
		if err != nil {
			r.release()
		}
	}()
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return fmt.Errorf("create kernel trace directory: %w", err)
	}
	md := ctf.Metadata{UUID: ctf.NewUUID(), Label: Label, ClockUUID: opts.ClockUUID, ClockOffsetNs: opts.ClockOffsetNs, Classes: r.classes}
	if err := os.WriteFile(filepath.Join(opts.Dir, "metadata"), []byte(md.Text()), 0o644); err != nil {
		return fmt.Errorf("write kernel metadata: %w", err)
	}
	r.ring, err = ebpf.NewMap(&ebpf.MapSpec{Name: "dpperf_ring", Type: ebpf.RingBuf, MaxEntries: uint32(opts.RingSize)})
	if err != nil {
		return fmt.Errorf("create ring buffer: %w", err)
	}
	r.slots, err = ebpf.NewMap(&ebpf.MapSpec{Name: "dpperf_cpu", Type: ebpf.PerCPUArray, KeySize: 4, ValueSize: uint32(binary.Size(cpuSlot{})), MaxEntries: 1})
	if err != nil {
		return fmt.Errorf("create per-CPU slots: %w", err)
	}
	for i, f := range r.formats {
		p, err := program(f, i, r.ring, r.slots)
		if err != nil {
			return err
		}
		r.progs = append(r.progs, p)
	}
	r.rd, err = ringbuf.NewReader(r.ring)
	if err != nil {
		return fmt.Errorf("open ring buffer: %w", err)
	}
	r.start = trace.NowNanos()
	r.mark = r.start
	for i, f := range r.formats {
		l, err := link.Tracepoint(f.Category, f.Name, r.progs[i], nil)
		if err != nil {
			return fmt.Errorf("attach to tracepoint %s:%s: %w", f.Category, f.Name, err)
		}
		r.links = append(r.links, l)
	}
	r.done = make(chan error, 1)
	go func() { r.done <- r.loop() }()
	return nil
}

// Snapshot returns the statistics so far.
func (r *Recorder) Snapshot() Stats {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.stats
	s.Tracepoints = append([]string(nil), s.Tracepoints...)
	return s
}

// Stop detaches the programs, drains what is left, closes the files and
// releases every kernel object; no BPF state remains afterwards.
func (r *Recorder) Stop() (Stats, error) {
	if r.stopped {
		return r.Snapshot(), nil
	}
	r.stopped = true
	var err error
	for _, l := range r.links {
		err = errors.Join(err, l.Close())
	}
	r.links = nil
	if r.done != nil {
		r.stop.Store(true)
		err = errors.Join(err, <-r.done)
		r.done = nil
	}
	r.release()
	return r.Snapshot(), err
}

func (r *Recorder) release() {
	for _, l := range r.links {
		l.Close()
	}
	r.links = nil
	if r.rd != nil {
		r.rd.Close()
	}
	for _, p := range r.progs {
		p.Close()
	}
	r.progs = nil
	if r.ring != nil {
		r.ring.Close()
	}
	if r.slots != nil {
		r.slots.Close()
	}
	for _, s := range r.streams {
		s.file.Close()
	}
	if r.missed != nil {
		r.missed.file.Close()
	}
}
