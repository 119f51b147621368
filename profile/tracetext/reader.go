// Package tracetext reads kernel trace text, as /sys/kernel/tracing/trace,
// trace_pipe and `trace-cmd report` print it, into the events of a path.
// Lines look like
//
//	<comm>-<pid> [<cpu>] <flags> <sec>.<frac>: <event>: <fields>
//
// where the flags column is absent in trace-cmd output and frac has 6
// (µs) or 9 (ns, trace-cmd report -t) digits. Lines of events the path
// does not use are skipped; "[LOST n EVENTS]" lines are counted. The
// printed field text is not a kernel ABI: the block and nvme formats of
// Linux 5.15 to 6.18 are understood. Gzip-compressed input is accepted.
package tracetext

import (
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/dpperf/dpperf/profile/event"
	"github.com/dpperf/dpperf/profile/path"
)

// Stats counts what the reader saw.
type Stats struct {
	Lines   int64 // lines read
	Events  int64 // events returned
	Skipped int64 // lines of events the path does not use, headers, comments
	Lost    int64 // events the kernel reported lost ([LOST n EVENTS])
}

// Reader turns trace text into path events.
type Reader struct {
	src    io.Reader
	sc     *bufio.Scanner
	kinds  map[string]uint8 // trace event name -> path event index
	kprobe map[uint8]bool   // path events that are kprobes
	seen   []bool
	stats  Stats
	line   int64
}

// NewReader reads trace text for path p from r. Nothing is read before
// the first call to Next (r may be a pipe that has no data yet).
func NewReader(r io.Reader, p *path.Path) (*Reader, error) {
	kinds, kprobe := map[string]uint8{}, map[uint8]bool{}
	for i := range p.Events {
		e := &p.Events[i]
		if e.Tracepoint != "" {
			_, n := e.TraceName()
			kinds[n] = uint8(i)
		} else {
			kinds[e.Kprobe] = uint8(i)
			kinds["p_"+e.Kprobe+"_0"] = uint8(i)
			kprobe[uint8(i)] = true
		}
	}
	return &Reader{src: r, kinds: kinds, kprobe: kprobe, seen: make([]bool, len(p.Events))}, nil
}

// open detects gzip input and sets up the line scanner.
func (r *Reader) open() error {
	br := bufio.NewReaderSize(r.src, 1<<16)
	var in io.Reader = br
	if magic, err := br.Peek(2); err == nil && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return fmt.Errorf("open gzip trace: %w", err)
		}
		in = zr
	}
	r.sc = bufio.NewScanner(in)
	r.sc.Buffer(make([]byte, 0, 1<<16), 1<<20)
	return nil
}

// Stats returns the counts so far.
func (r *Reader) Stats() Stats { return r.stats }

// Seen reports, per path event, whether the trace contained it.
func (r *Reader) Seen() []bool { return r.seen }

// Next returns the next event of the path, or io.EOF. A malformed line of
// an event the path uses is an error naming the line number.
func (r *Reader) Next() (event.Event, error) {
	if r.sc == nil {
		if err := r.open(); err != nil {
			return event.Event{}, err
		}
	}
	for r.sc.Scan() {
		r.line++
		r.stats.Lines++
		ev, ok, err := r.parse(r.sc.Text())
		if err != nil {
			return event.Event{}, fmt.Errorf("line %d: %w", r.line, err)
		}
		if !ok {
			r.stats.Skipped++
			continue
		}
		r.stats.Events++
		r.seen[ev.Kind] = true
		return ev, nil
	}
	if err := r.sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return event.Event{}, fmt.Errorf("line %d: longer than 1 MiB", r.line+1)
		}
		return event.Event{}, fmt.Errorf("read trace: %w", err)
	}
	return event.Event{}, io.EOF
}

// parse handles one line; ok is false for lines to skip.
func (r *Reader) parse(line string) (ev event.Event, ok bool, err error) {
	s := strings.TrimSpace(line)
	if s == "" || s[0] == '#' {
		return ev, false, nil
	}
	if i := strings.Index(s, "[LOST "); i >= 0 && strings.HasSuffix(s, " EVENTS]") {
		if i+6 > len(s)-8 {
			return ev, false, fmt.Errorf("bad lost-events line %q", s)
		}
		n, err := strconv.ParseInt(s[i+6:len(s)-8], 10, 64)
		if err != nil || n < 0 {
			return ev, false, fmt.Errorf("bad lost-events count in %q", s)
		}
		r.stats.Lost += n
		return ev, false, nil
	}
	cpu, rest, found := cutCPU(s)
	if !found {
		return ev, false, nil // not an event line (e.g. trace-cmd headers)
	}
	// rest: [flags] ts: name: fields
	tsEnd := strings.Index(rest, ": ")
	if tsEnd < 0 {
		return ev, false, nil
	}
	head := strings.Fields(rest[:tsEnd])
	if len(head) == 0 {
		return ev, false, nil
	}
	after := rest[tsEnd+2:]
	nameEnd := strings.IndexByte(after, ':')
	if nameEnd < 0 {
		return ev, false, nil
	}
	kind, use := r.kinds[strings.TrimSpace(after[:nameEnd])]
	if !use {
		return ev, false, nil
	}
	ts, err := parseTS(head[len(head)-1])
	if err != nil {
		return ev, false, err
	}
	ev = event.Event{TS: ts, CPU: cpu, Kind: kind}
	fields := strings.TrimSpace(after[nameEnd+1:])
	switch {
	case r.kprobe[kind]:
		err = parseKprobe(fields, &ev)
	case strings.Contains(fields, "cmdid="):
		err = parseNVMe(fields, &ev)
	default:
		err = parseBlock(fields, &ev)
	}
	if err != nil {
		return ev, false, fmt.Errorf("%s: %w", strings.TrimSpace(after[:nameEnd]), err)
	}
	return ev, true, nil
}

// cutCPU finds the " [NNN] " CPU column and returns what follows it.
func cutCPU(s string) (uint16, string, bool) {
	for from := 0; ; {
		i := strings.Index(s[from:], "[")
		if i < 0 {
			return 0, "", false
		}
		i += from
		j := strings.IndexByte(s[i:], ']')
		if j < 0 {
			return 0, "", false
		}
		j += i
		if j > i+1 && j-i <= 6 && (i == 0 || s[i-1] == ' ') {
			if n, err := strconv.ParseUint(s[i+1:j], 10, 16); err == nil {
				return uint16(n), s[j+1:], true
			}
		}
		from = i + 1
	}
}

// parseTS parses "245.935464" or "245.935464123" (seconds) into ns.
func parseTS(s string) (int64, error) {
	sec, frac, ok := strings.Cut(s, ".")
	if !ok || len(frac) == 0 || len(frac) > 9 {
		return 0, fmt.Errorf("bad timestamp %q", s)
	}
	a, err1 := strconv.ParseInt(sec, 10, 64)
	b, err2 := strconv.ParseInt(frac, 10, 64)
	if err1 != nil || err2 != nil || a < 0 || b < 0 || a > 1<<33 {
		return 0, fmt.Errorf("bad timestamp %q", s)
	}
	for i := len(frac); i < 9; i++ {
		b *= 10
	}
	return a*1e9 + b, nil
}
