package record

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
	"time"

	"github.com/dpperf/dpperf/internal/atomicfile"
	"github.com/dpperf/dpperf/record/ctf"
	"github.com/dpperf/dpperf/record/pcapng"
	"github.com/dpperf/dpperf/record/trace"
)

// Recorder records the workers of one tracer according to a Config.
type Recorder struct {
	cfg    *Config
	tracer *trace.Tracer
	log    *slog.Logger

	mu sync.Mutex
	s  *session
}

// New returns a disabled recorder; log may be nil.
func New(t *trace.Tracer, cfg *Config, log *slog.Logger) *Recorder {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Recorder{cfg: cfg, tracer: t, log: log}
}

// Stats describe a recording: its directory, one entry per stream, and
// the longest time between two drains. A buffer that fills faster than
// MaxDrainGapNs drops events; size it to hold that long at the worker's
// event rate.
type Stats struct {
	Dir           string        `json:"dir"`
	Streams       []StreamStats `json:"streams"`
	MaxDrainGapNs uint64        `json:"max_drain_gap_ns"`
}

// StreamStats count what was recorded of one worker.
type StreamStats struct {
	Label     string `json:"label"`
	Thread    string `json:"thread"`
	File      string `json:"file,omitempty"`   // CTF stream file, relative to Dir
	Pcapng    string `json:"pcapng,omitempty"` // pcapng file, relative to Dir
	Events    uint64 `json:"events"`           // CTF events written
	Captured  uint64 `json:"captured"`         // packets captured
	Discarded uint64 `json:"events_discarded"` // events dropped by a full buffer
	Packets   uint64 `json:"ctf_packets"`      // CTF packets written
}

type session struct {
	dir       string
	clockUUID string
	clock     trace.Clock
	comps     map[string]*component
	streams   []*stream
	byW       map[*trace.Worker]bool
	err       error
	lastPass  uint64 // time of the last drain (or of the start)
	maxGap    uint64 // longest time between two drains
}

type component struct {
	label   string
	path    string // relative to the session dir
	md      bool   // metadata written
	threads map[string]bool
	section pcapng.Section
	pcap    *os.File
	pending []pcapng.Packet
}

type stream struct {
	w         *trace.Worker
	buf       *trace.Buffer
	comp      *component
	file      *os.File
	ctf       *ctf.Stream
	lastEnd   uint64
	lastDrain uint64
	stats     StreamStats
}

// Enable starts a recording in a new timestamped directory under the
// target root, attaching buffers to the matching workers, and returns the
// directory. Workers registered later are attached when they register.
func (r *Recorder) Enable() (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.s != nil {
		return r.s.dir, nil
	}
	dir, err := NewRecordingDir(r.cfg.TargetRoot, time.Now())
	if err != nil {
		return "", err
	}
	r.s = &session{dir: dir, clockUUID: ctf.NewUUID(), clock: trace.Calibrate(10 * time.Millisecond),
		comps: map[string]*component{}, byW: map[*trace.Worker]bool{}, lastPass: trace.NowNanos()}
	for _, w := range r.tracer.SetHook(r.hook) {
		if err := r.attach(w); err != nil {
			r.s.err = err
		}
	}
	r.log.Info("recording", "dir", dir)
	return dir, r.s.err
}

func (r *Recorder) hook(w *trace.Worker) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.s != nil {
		if err := r.attach(w); err != nil && r.s.err == nil {
			r.s.err = err
		}
	}
}

// attach gives w a buffer when a policy selects it. r.mu is held.
func (r *Recorder) attach(w *trace.Worker) error {
	s := r.s
	if s.byW[w] {
		return nil
	}
	s.byW[w] = true
	p := r.cfg.Match(w.Label(), w.Thread())
	if p == nil {
		return nil
	}
	ctfOn, pcapOn := p.Has(CTF), p.Has(PCAPNG)
	c, err := s.component(w.Label(), ctfOn)
	if err != nil {
		return err
	}
	st := &stream{w: w, comp: c, stats: StreamStats{Label: w.Label(), Thread: w.Thread()}}
	if ctfOn {
		name := ThreadFile(w.Thread())
		for i := 2; c.threads[name]; i++ {
			name = fmt.Sprintf("%s-%d", ThreadFile(w.Thread()), i)
		}
		c.threads[name] = true
		st.stats.File = filepath.Join(c.path, name)
		st.file, err = os.OpenFile(filepath.Join(s.dir, st.stats.File), os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o644)
		if err != nil {
			return fmt.Errorf("create stream file: %w", err)
		}
		st.ctf = ctf.NewStream(st.file, w.Label(), w.Thread())
	}
	st.buf = trace.NewBuffer(trace.BufferConfig{Size: int(p.Buffer), CTF: ctfOn, Packets: pcapOn, SnapLen: r.cfg.SnapLen})
	st.lastEnd = s.now()
	st.lastDrain = trace.NowNanos()
	s.streams = append(s.streams, st)
	w.Attach(st.buf)
	return nil
}

// now reads the event clock in nanoseconds.
func (s *session) now() uint64 { return s.clock.Nanos(trace.Now()) }

// component returns the component of label, creating its directory and,
// for CTF, its metadata.
func (s *session) component(label string, ctfOn bool) (*component, error) {
	path := LabelPath(label)
	c := s.comps[path]
	if c == nil {
		c = &component{label: label, path: path, threads: map[string]bool{"metadata": true}}
		s.comps[path] = c
	}
	if ctfOn && !c.md {
		dir := filepath.Join(s.dir, path)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("create component directory: %w", err)
		}
		md := ctf.Metadata{UUID: ctf.NewUUID(), Label: label, ClockOffsetNs: s.clock.EpochOffset, ClockUUID: s.clockUUID, Classes: ctf.StandardClasses()}
		if err := atomicfile.WriteFile(filepath.Join(dir, "metadata"), []byte(md.Text())); err != nil {
			return nil, fmt.Errorf("write metadata: %w", err)
		}
		c.md = true
	}
	return c, nil
}

// Drain drains every buffer whose period has passed or which is at least
// a quarter full (all of them when force is set) and writes what it held.
func (r *Recorder) Drain(force bool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.s == nil {
		return nil
	}
	return r.drain(force)
}

// drainFill is the share of a buffer (1/drainFill) at which Loop drains it
// before its period is over. A quarter leaves the drainer three quarters of
// the buffer's time to fill (45 ms of 16 MiB at 10 million events/s) to
// come back when the machine is busy.
const drainFill = 4

func (r *Recorder) drain(force bool) error {
	s := r.s
	period := uint64(r.cfg.Period)
	now := trace.NowNanos()
	s.maxGap = max(s.maxGap, now-s.lastPass)
	s.lastPass = now
	for _, st := range s.streams {
		if force || now-st.lastDrain >= period || st.buf.Used() >= st.buf.Size()/drainFill {
			if err := s.drainStream(st); err != nil && s.err == nil {
				s.err = err
			}
			st.lastDrain = now
		}
	}
	for _, c := range s.comps {
		if err := s.writeSection(c); err != nil && s.err == nil {
			s.err = err
		}
	}
	return s.err
}

func (s *session) drainStream(st *stream) error {
	// Events are copied once, from the ring into the CTF packet, with
	// their timestamps converted to ns. The packet ends at cut, read from
	// the event clock before Consume looks at what the producer published:
	// events published later are stamped after cut and belong to the next
	// packet, whose begin is this end. Reading the time after Consume
	// instead would end the packet after a drain that may take
	// milliseconds, and every event written meanwhile would have to move to
	// that time. Packet bounds and events use one clock, so an error of
	// the tick calibration cannot put events outside their packets. The
	// one event a producer may have stamped before cut but
	// published after it is still moved to the next packet's begin, so
	// that times never go back within a stream.
	var ev []byte
	if st.ctf != nil {
		ev = st.ctf.Begin()
	}
	hdr := len(ev)
	last := st.lastEnd
	cut := s.now()
	dropped := st.buf.Consume(func(kind byte, p []byte) {
		switch {
		case kind == trace.KindCTF && len(p) >= 9 && ev != nil:
			ts := max(s.clock.Nanos(ctf.EventTimestamp(p)), last)
			last = ts
			ev = append(ev, p...)
			ctf.SetEventTimestamp(ev[len(ev)-len(p):], ts)
			st.stats.Events++
		case kind == trace.KindPacket:
			c, ok := trace.DecodePacket(p)
			if !ok {
				return
			}
			ts := int64(s.clock.Nanos(c.Timestamp)) + s.clock.EpochOffset
			st.comp.pending = append(st.comp.pending, pcapng.Packet{Time: time.Unix(0, ts), Iface: c.Iface,
				Out: c.Dir == trace.Out, OrigLen: c.OrigLen, Data: append([]byte(nil), c.Data...)})
			st.stats.Captured++
			st.stats.Pcapng = st.comp.path + ".pcapng"
		}
	})
	end := max(cut, last)
	st.stats.Discarded += dropped
	var err error
	if st.ctf != nil && (len(ev) > hdr || dropped > 0) {
		if err = st.ctf.Commit(st.lastEnd, end, dropped, ev); err == nil {
			st.stats.Packets++
		} else {
			err = fmt.Errorf("write CTF packet of %s: %w", st.stats.File, err)
		}
	}
	st.lastEnd = end
	return err
}

// writeSection writes the packets captured in c since the last section.
func (s *session) writeSection(c *component) error {
	if len(c.pending) == 0 {
		return nil
	}
	sort.SliceStable(c.pending, func(i, j int) bool { return c.pending[i].Time.Before(c.pending[j].Time) })
	if c.pcap == nil {
		path := filepath.Join(s.dir, c.path+".pcapng")
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return fmt.Errorf("create pcapng directory: %w", err)
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o644)
		if err != nil {
			return fmt.Errorf("create pcapng file: %w", err)
		}
		c.pcap = f
		c.section.Label = c.label
	}
	err := c.section.Write(c.pcap, c.pending)
	c.pending = c.pending[:0]
	if err != nil {
		return fmt.Errorf("write pcapng section of %s: %w", c.label, err)
	}
	return nil
}

// Disable stops the recording: it detaches the buffers, drains them a last
// time, closes the files and returns the recording's statistics.
func (r *Recorder) Disable() (Stats, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.s
	if s == nil {
		return Stats{}, nil
	}
	r.tracer.SetHook(nil)
	for _, st := range s.streams {
		st.w.Attach(nil)
	}
	// Let events being written into a detached buffer finish.
	time.Sleep(time.Millisecond)
	err := r.drain(true)
	stats := r.stats()
	for _, st := range s.streams {
		if st.file != nil {
			err = errors.Join(err, st.file.Close())
		}
	}
	for _, c := range s.comps {
		if c.pcap != nil {
			err = errors.Join(err, c.pcap.Close())
		}
	}
	r.s = nil
	r.log.Info("recording stopped", "dir", s.dir)
	return stats, err
}

// Stats returns the statistics of the current recording.
func (r *Recorder) Stats() Stats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stats()
}

func (r *Recorder) stats() Stats {
	if r.s == nil {
		return Stats{}
	}
	st := Stats{Dir: r.s.dir, MaxDrainGapNs: r.s.maxGap}
	for _, s := range r.s.streams {
		st.Streams = append(st.Streams, s.stats)
	}
	return st
}

// Run records until ctx is done, enabling first when the configuration
// says so (see Loop). It always disables the recorder before it returns.
func (r *Recorder) Run(ctx context.Context) (Stats, error) {
	if r.cfg.Enabled() {
		if _, err := r.Enable(); err != nil {
			st, err2 := r.Disable()
			return st, errors.Join(err, err2)
		}
	}
	err := r.Loop(ctx)
	st, err2 := r.Disable()
	return st, errors.Join(err, err2)
}

// Loop drains every buffer each period, and sooner when it is a quarter
// full (it looks every millisecond), until ctx is done or writing fails.
func (r *Recorder) Loop(ctx context.Context) error {
	// The drainer runs on a thread of its own at a raised priority where
	// the process may raise it, and sleeps in the kernel rather than on a
	// Go timer: on a machine whose cores are busy, neither the other
	// threads of the process nor those of other programs then keep it from
	// draining (see docs/record.md, Performance).
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if restore, err := raisePriority(); err != nil {
		r.log.Debug("drainer priority not raised", "err", err)
	} else {
		defer restore()
	}
	d := min(time.Duration(r.cfg.Period), time.Millisecond)
	for {
		select {
		case <-ctx.Done():
			return nil
		default:
		}
		sleep(d)
		if err := r.Drain(false); err != nil {
			return err
		}
	}
}

// Clock returns the clock UUID and epoch offset of the current recording,
// for other writers (such as the kernel recorder) whose traces should line
// up with it in viewers. Both are zero when the recorder is disabled.
func (r *Recorder) Clock() (uuid string, epochOffsetNs int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.s == nil {
		return "", 0
	}
	return r.s.clockUUID, r.s.clock.EpochOffset
}
