// Package ctftrace reads the kernel traces `dpperf record --tracepoint`
// writes (CTF, one stream per CPU; see record/ctf/FORMAT.md) into the
// events of a path, so that a trace recorded once can be profiled later,
// with any path, filter or grouping. The streams are merged by time.
//
// Tracepoint fields are taken by name from the recording's metadata, not
// from printed text: dev, sector, nr_sector, bytes and rwbs of the block
// events; qid, cid and opcode of the nvme and nvmet events.
package ctftrace

import (
	"container/heap"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/dpperf/dpperf/profile/event"
	"github.com/dpperf/dpperf/profile/path"
	recanalyze "github.com/dpperf/dpperf/record/analyze"
	"github.com/dpperf/dpperf/record/ctf"
)

// Stats counts what the reader saw.
type Stats struct {
	Events  int64 // events returned
	Skipped int64 // events of tracepoints the path does not use
	Lost    int64 // events the recorder discarded (full buffer), all streams
}

// Trace reads the kernel streams of one recording.
type Trace struct {
	dir     string
	streams []*stream
	h       streamHeap
	seen    []bool
	stats   Stats
	started bool
}

// stream is one CPU's stream file with its decoding state.
type stream struct {
	name    string // file path, for errors
	f       *os.File
	rd      *ctf.Reader
	cpu     uint16
	pkt     *ctf.Packet
	i       int // next event in pkt
	kinds   map[*ctf.EventClass]*classMap
	lost    uint64 // running total of the last packet
	skipped int64
	nextTS  uint64
	hasNext bool
}

// classMap says where a tracepoint's fields are in a CTF event class.
type classMap struct {
	kind                                                 uint8
	dev, sector, nrSector, bytes, rwbs, qid, cid, opcode int // field index, -1: absent
}

// Open finds the CTF traces under dir (a recording, or one trace
// directory) that hold tracepoints of path p and prepares to read them.
func Open(dir string, p *path.Path) (*Trace, error) {
	t := &Trace{dir: dir, seen: make([]bool, len(p.Events))}
	byName := map[string]uint8{}
	for i := range p.Events {
		if tp := p.Events[i].Tracepoint; tp != "" {
			byName[tp] = uint8(i)
		}
	}
	refs, err := recanalyze.Streams(dir)
	if err != nil {
		return nil, err
	}
	// Stream files come sorted by path, so those of one trace directory
	// are neighbours.
	for i := 0; i < len(refs); {
		tdir := filepath.Dir(refs[i].Path)
		var files []string
		for ; i < len(refs) && filepath.Dir(refs[i].Path) == tdir; i++ {
			files = append(files, filepath.Join(dir, refs[i].Path))
		}
		if err := t.addTrace(filepath.Join(dir, tdir), files, byName); err != nil {
			t.Close()
			return nil, err
		}
	}
	if len(t.streams) == 0 {
		return nil, fmt.Errorf("%s: no CTF trace with tracepoints of path %s (record them with dpperf record --tracepoint)", dir, p.Name)
	}
	return t, nil
}

// addTrace opens the stream files of one trace directory when its
// metadata declares tracepoints of the path.
func (t *Trace) addTrace(dir string, files []string, byName map[string]uint8) error {
	text, err := os.ReadFile(filepath.Join(dir, "metadata"))
	if err != nil {
		return err
	}
	md, err := ctf.ParseMetadata(string(text))
	if err != nil {
		return fmt.Errorf("%s: %w", filepath.Join(dir, "metadata"), err)
	}
	kinds := map[*ctf.EventClass]*classMap{}
	for i := range md.Classes {
		c := &md.Classes[i]
		kind, ok := byName[c.Name]
		if !ok {
			continue
		}
		m := &classMap{kind: kind}
		for _, f := range []struct {
			dst  *int
			name string
		}{{&m.dev, "dev"}, {&m.sector, "sector"}, {&m.nrSector, "nr_sector"}, {&m.bytes, "bytes"}, {&m.rwbs, "rwbs"}, {&m.qid, "qid"}, {&m.cid, "cid"}, {&m.opcode, "opcode"}} {
			*f.dst = -1
			for j, fd := range c.Fields {
				if strings.TrimPrefix(fd.Name, "_") == f.name {
					*f.dst = j
				}
			}
		}
		if (m.dev < 0 || m.sector < 0) && (m.qid < 0 || m.cid < 0) {
			return fmt.Errorf("%s: event %s has neither dev and sector nor qid and cid", filepath.Join(dir, "metadata"), c.Name)
		}
		kinds[c] = m
	}
	if len(kinds) == 0 {
		return nil
	}
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		s := &stream{name: name, f: f, rd: ctf.NewReader(f, md), kinds: kinds}
		if n, err := strconv.ParseUint(strings.TrimPrefix(filepath.Base(name), "cpu"), 10, 16); err == nil {
			s.cpu = uint16(n)
		}
		t.streams = append(t.streams, s)
	}
	return nil
}

// advance moves s to its next event of interest; hasNext is false at the
// end of the stream.
func (s *stream) advance() error {
	for {
		for s.pkt != nil && s.i < len(s.pkt.Events) {
			ev := &s.pkt.Events[s.i]
			if _, ok := s.kinds[ev.Class]; ok {
				s.nextTS, s.hasNext = ev.Timestamp, true
				return nil
			}
			s.skipped++
			s.i++
		}
		p, err := s.rd.Next()
		if errors.Is(err, io.EOF) {
			s.hasNext = false
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		s.pkt, s.i, s.lost = p, 0, p.Discarded
		if n, err := strconv.ParseUint(strings.TrimPrefix(p.Thread, "cpu"), 10, 16); err == nil {
			s.cpu = uint16(n)
		}
	}
}

// Next returns the next event of the path in time order over all CPUs,
// or io.EOF.
func (t *Trace) Next() (event.Event, error) {
	if !t.started {
		t.started = true
		for _, s := range t.streams {
			if err := s.advance(); err != nil {
				return event.Event{}, err
			}
			if s.hasNext {
				t.h = append(t.h, s)
			}
		}
		heap.Init(&t.h)
	}
	if len(t.h) == 0 {
		return event.Event{}, io.EOF
	}
	s := t.h[0]
	ev := &s.pkt.Events[s.i]
	out, err := decode(ev, s.kinds[ev.Class], s.cpu)
	if err != nil {
		return event.Event{}, fmt.Errorf("%s: %w", s.name, err)
	}
	s.i++
	if err := s.advance(); err != nil {
		return event.Event{}, err
	}
	if s.hasNext {
		heap.Fix(&t.h, 0)
	} else {
		heap.Pop(&t.h)
	}
	t.stats.Events++
	t.seen[out.Kind] = true
	return out, nil
}

// decode maps one CTF event to a path event.
func decode(ev *ctf.Event, m *classMap, cpu uint16) (event.Event, error) {
	out := event.Event{TS: int64(ev.Timestamp), CPU: cpu, Kind: m.kind}
	if out.TS < 0 {
		return out, fmt.Errorf("%s: timestamp %d out of range", ev.Class.Name, ev.Timestamp)
	}
	u := func(i int) uint64 {
		if i < 0 {
			return 0
		}
		v := ev.Values[i]
		if ev.Class.Fields[i].Kind.Signed() {
			return uint64(v.Int)
		}
		return v.Uint
	}
	if m.qid >= 0 && m.cid >= 0 {
		q, c := u(m.qid), u(m.cid)
		if q > 0xffff || c > 0xffff {
			return out, fmt.Errorf("%s: qid %d or cid %d out of range", ev.Class.Name, q, c)
		}
		out.QID, out.CID = uint16(q), uint16(c)
		// NVMe I/O opcodes: 0x01 write, 0x02 read (admin queue 0 differs).
		if op := u(m.opcode); m.opcode >= 0 && q != 0 {
			switch op {
			case 1:
				out.Op = event.OpWrite
			case 2:
				out.Op = event.OpRead
			}
		}
	}
	if m.dev >= 0 && m.sector >= 0 {
		dev := u(m.dev)
		if dev > 0xffffffff {
			return out, fmt.Errorf("%s: dev %d out of range", ev.Class.Name, dev)
		}
		out.Dev, out.Sector = event.Dev(dev), u(m.sector)
		out.Bytes = uint32(min(u(m.nrSector)*512, 0xffffffff))
		if b := u(m.bytes); m.bytes >= 0 && b > 0 && b <= 0xffffffff {
			out.Bytes = uint32(b)
		}
		if m.rwbs >= 0 {
			out.Op = event.OpFromRWBS(ev.Values[m.rwbs].Str)
		}
	}
	return out, nil
}

// Seen reports, per path event, whether the trace contained it so far.
func (t *Trace) Seen() []bool { return t.seen }

// Stats returns the counts so far; Lost sums the recorder's discarded
// events over the streams (read so far).
func (t *Trace) Stats() Stats {
	st := t.stats
	for _, s := range t.streams {
		st.Lost += int64(s.lost)
		st.Skipped += s.skipped
	}
	return st
}

// Close closes the stream files.
func (t *Trace) Close() error {
	for _, s := range t.streams {
		s.f.Close()
	}
	return nil
}

// streamHeap orders streams by the time of their next event.
type streamHeap []*stream

func (h streamHeap) Len() int           { return len(h) }
func (h streamHeap) Less(i, j int) bool { return h[i].nextTS < h[j].nextTS }
func (h streamHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *streamHeap) Push(x any)        { *h = append(*h, x.(*stream)) }
func (h *streamHeap) Pop() any {
	old := *h
	s := old[len(old)-1]
	*h = old[:len(old)-1]
	return s
}
