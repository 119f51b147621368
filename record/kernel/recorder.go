package kernel

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
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

// Stats count what a kernel recording wrote.
type Stats struct {
	Dir         string   `json:"dir"`
	Tracepoints []string `json:"tracepoints"`
	Events      uint64   `json:"events"`
	Lost        uint64   `json:"events_discarded"`
}

// Recorder records a set of tracepoints.
type Recorder struct {
	formats []*Format
	classes []ctf.EventClass
	ring    *ebpf.Map
	lost    *ebpf.Map
	progs   []*ebpf.Program
	links   []link.Link
	rd      *ringbuf.Reader
	opts    Options
	streams map[uint32]*cpuStream
	lostSum []uint64
	stop    atomic.Bool
	stopped bool
	done    chan error
	mu      sync.Mutex
	stats   Stats
}

type cpuStream struct {
	file    *os.File
	ctf     *ctf.Stream
	pending []sample
	lastEnd uint64
}

type sample struct {
	ts uint64
	ev []byte
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
	r.lost, err = ebpf.NewMap(&ebpf.MapSpec{Name: "dpperf_lost", Type: ebpf.PerCPUArray, KeySize: 4, ValueSize: 8, MaxEntries: 1})
	if err != nil {
		return fmt.Errorf("create lost counter: %w", err)
	}
	for i, f := range r.formats {
		p, err := program(f, i, r.ring, r.lost)
		if err != nil {
			return err
		}
		r.progs = append(r.progs, p)
	}
	r.rd, err = ringbuf.NewReader(r.ring)
	if err != nil {
		return fmt.Errorf("open ring buffer: %w", err)
	}
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
	if r.lost != nil {
		r.lost.Close()
	}
	for _, s := range r.streams {
		s.file.Close()
	}
}

func (r *Recorder) loop() error {
	var rec ringbuf.Record
	for {
		stopping := r.stop.Load()
		deadline := time.Now().Add(r.opts.Period)
		if stopping {
			deadline = time.Now()
		}
		r.rd.SetDeadline(deadline)
		for {
			err := r.rd.ReadInto(&rec)
			if errors.Is(err, os.ErrDeadlineExceeded) {
				break
			}
			if err != nil {
				return fmt.Errorf("read ring buffer: %w", err)
			}
			r.add(rec.RawSample)
		}
		if err := r.flush(); err != nil {
			return err
		}
		if stopping {
			return nil
		}
	}
}

// add decodes one sample into a CTF event of its CPU's stream.
func (r *Recorder) add(s []byte) {
	if len(s) < sampleHeader {
		return
	}
	le := binary.LittleEndian
	ts, cpu, idx, pidTgid := le.Uint64(s), le.Uint32(s[8:]), le.Uint32(s[12:]), le.Uint64(s[16:])
	if int(idx) >= len(r.formats) {
		return
	}
	ev := ctf.AppendEventHeader(nil, uint8(ctf.FirstCustomID+idx), ts)
	ev = le.AppendUint32(ev, uint32(pidTgid))
	ev = le.AppendUint32(ev, uint32(pidTgid>>32))
	ev = r.formats[idx].AppendFields(ev, s[sampleHeader:])
	st := r.stream(cpu)
	if st != nil {
		st.pending = append(st.pending, sample{ts, ev})
	}
}

func (r *Recorder) stream(cpu uint32) *cpuStream {
	if s := r.streams[cpu]; s != nil {
		return s
	}
	name := fmt.Sprintf("cpu%d", cpu)
	f, err := os.OpenFile(filepath.Join(r.opts.Dir, name), os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o644)
	if err != nil {
		return nil
	}
	s := &cpuStream{file: f, ctf: ctf.NewStream(f, Label, name)}
	r.streams[cpu] = s
	return s
}

// flush writes one packet per CPU with the samples read since the last
// flush, sorted by time, and the samples lost meanwhile.
func (r *Recorder) flush() error {
	var perCPU []uint64
	if err := r.lost.Lookup(uint32(0), &perCPU); err != nil {
		return fmt.Errorf("read lost counter: %w", err)
	}
	if r.lostSum == nil {
		r.lostSum = make([]uint64, len(perCPU))
	}
	now := trace.NowNanos()
	var events, lost uint64
	for cpu, v := range perCPU {
		delta := v - r.lostSum[cpu]
		r.lostSum[cpu] = v
		st := r.streams[uint32(cpu)]
		if st == nil && delta > 0 {
			st = r.stream(uint32(cpu))
		}
		if st == nil || (len(st.pending) == 0 && delta == 0) {
			continue
		}
		sort.SliceStable(st.pending, func(i, j int) bool { return st.pending[i].ts < st.pending[j].ts })
		var buf []byte
		end := now
		for _, p := range st.pending {
			ts := max(p.ts, st.lastEnd)
			ctf.SetEventTimestamp(p.ev, ts)
			end = max(end, ts)
			buf = append(buf, p.ev...)
		}
		if err := st.ctf.WritePacket(st.lastEnd, end, delta, buf); err != nil {
			return fmt.Errorf("write kernel packet: %w", err)
		}
		st.lastEnd = end
		events += uint64(len(st.pending))
		lost += delta
		st.pending = st.pending[:0]
	}
	r.mu.Lock()
	r.stats.Events += events
	r.stats.Lost += lost
	r.mu.Unlock()
	return nil
}
