package record

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/dpperf/dpperf/record/pipeline"
	"github.com/dpperf/dpperf/record/trace"
)

// maxIdentical is the longest run of events of one stream that may share a
// timestamp. The clock counts nanoseconds, and every event reads it on the
// hot path (a time-stamp counter read takes more than a nanosecond on any
// CPU), so two events of one thread are never stamped within the same
// nanosecond. An event can share its time with another only when the
// recorder moves it to its packet's begin: the one event a producer had
// stamped, but not yet published, when the drain before took its cut (one
// thread has at most one event in flight). Two is therefore the bound, and
// it does not depend on how fast the machine is.
const maxIdentical = 2

// streamTimes is what babeltrace2 showed of one stream's timestamps.
type streamTimes struct {
	Events    int
	Packets   int
	Discarded int // discarded-events messages
	MaxRun    int // longest run of events with one timestamp
}

// timestampCheck walks the messages of one recording as babeltrace2's
// sink.text.details component prints them in compact form, one per line:
//
//	[Unknown] {0 0 0} Stream beginning
//	[398,797,777,051 1,795,577,524,563,231,900] {1 0 0} Packet beginning
//	[398,806,849,694 1,795,577,524,572,304,543] {3 0 0} Event `Signal_submit` (5)
//	[508,125,249,841 1,795,...] [508,196,258,634 1,795,...] {0 0 0} Discarded events
//
// (the first number is the clock value in cycles, here nanoseconds; the
// braces hold the trace, stream class and stream).
type timestampCheck struct {
	streams map[string]*streamTimes
	state   map[string]*streamState
	errs    []string
}

type streamState struct {
	inPacket   bool
	begin, end uint64 // of the open packet
	packetEnd  uint64 // of the last packet, closed or open
	last       uint64 // last event's time
	run        int
}

// parseTimestamps checks the compact sink.text.details output r and
// returns each stream's figures and up to about maxErrs violations; it
// fails only on a line it cannot read. babeltrace2 prints a packet's end
// after its events, so the times of an open packet's events are kept until
// its end arrives.
func parseTimestamps(r io.Reader, maxErrs int) (map[string]*streamTimes, []string, error) {
	c := &timestampCheck{streams: map[string]*streamTimes{}, state: map[string]*streamState{}}
	type pending struct {
		line int
		ts   uint64
	}
	open := map[string][]pending{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		ts, known, key, msg, err := splitDetails(sc.Text())
		if err != nil {
			return nil, nil, fmt.Errorf("line %d: %w", n, err)
		}
		st := c.streams[key]
		if st == nil {
			st = &streamTimes{}
			c.streams[key] = st
			c.state[key] = &streamState{}
		}
		s := c.state[key]
		switch {
		case msg == "Packet beginning":
			if !known {
				return nil, nil, fmt.Errorf("line %d: packet beginning without a time", n)
			}
			if s.inPacket {
				c.errorf("stream %s line %d: packet begins inside a packet", key, n)
			}
			if ts < s.packetEnd {
				c.errorf("stream %s line %d: packet begins at %d, before the previous one ended (%d)", key, n, ts, s.packetEnd)
			}
			s.inPacket, s.begin = true, ts
			st.Packets++
		case msg == "Packet end":
			if !known {
				return nil, nil, fmt.Errorf("line %d: packet end without a time", n)
			}
			if !s.inPacket {
				c.errorf("stream %s line %d: packet ends outside a packet", key, n)
			}
			s.inPacket, s.end, s.packetEnd = false, ts, ts
			for _, p := range open[key] {
				if p.ts > s.end {
					c.errorf("stream %s line %d: event at %d after its packet's end %d", key, p.line, p.ts, s.end)
				}
			}
			open[key] = open[key][:0]
		case msg == "Discarded events":
			st.Discarded++
		case strings.HasPrefix(msg, "Event "):
			if !known {
				return nil, nil, fmt.Errorf("line %d: event without a time", n)
			}
			st.Events++
			if !s.inPacket {
				c.errorf("stream %s line %d: event outside a packet", key, n)
			} else if ts < s.begin {
				c.errorf("stream %s line %d: event at %d before its packet's begin %d", key, n, ts, s.begin)
			}
			switch {
			case st.Events > 1 && ts < s.last:
				c.errorf("stream %s line %d: time goes back from %d to %d", key, n, s.last, ts)
				s.run = 1
			case st.Events > 1 && ts == s.last:
				s.run++
			default:
				s.run = 1
			}
			s.last = ts
			st.MaxRun = max(st.MaxRun, s.run)
			open[key] = append(open[key], pending{n, ts})
		}
		if len(c.errs) >= maxErrs {
			break
		}
	}
	if err := sc.Err(); err != nil {
		return nil, nil, fmt.Errorf("read babeltrace2 output: %w", err)
	}
	for key, st := range c.streams {
		if st.MaxRun > maxIdentical {
			c.errorf("stream %s: %d events in a row share one timestamp (at most %d may)", key, st.MaxRun, maxIdentical)
		}
	}
	return c.streams, c.errs, nil
}

func (c *timestampCheck) errorf(format string, args ...any) {
	c.errs = append(c.errs, fmt.Sprintf(format, args...))
}

// splitDetails splits one compact line of sink.text.details into the
// message's clock value in cycles (known is false for "[Unknown]"), its
// stream key and the message text.
func splitDetails(l string) (ts uint64, known bool, key, msg string, err error) {
	if !strings.HasPrefix(l, "[") {
		return 0, false, "", "", fmt.Errorf("no time in %.80q", l)
	}
	i := strings.IndexByte(l, ']')
	if i < 0 {
		return 0, false, "", "", fmt.Errorf("unterminated time in %.80q", l)
	}
	t, rest := l[1:i], strings.TrimPrefix(l[i+1:], " ")
	if t != "Unknown" {
		cycles, _, _ := strings.Cut(t, " ")
		ts, err = strconv.ParseUint(strings.ReplaceAll(cycles, ",", ""), 10, 64)
		if err != nil {
			return 0, false, "", "", fmt.Errorf("time %q: %w", t, err)
		}
		known = true
	}
	if strings.HasPrefix(rest, "[") {
		// Discarded events and packets carry the end of their range too.
		k := strings.IndexByte(rest, ']')
		if k < 0 {
			return 0, false, "", "", fmt.Errorf("unterminated time in %.80q", l)
		}
		rest = strings.TrimPrefix(rest[k+1:], " ")
	}
	if !strings.HasPrefix(rest, "{") {
		return 0, false, "", "", fmt.Errorf("no stream in %.80q", l)
	}
	j := strings.IndexByte(rest, '}')
	if j < 0 {
		return 0, false, "", "", fmt.Errorf("unterminated stream in %.80q", l)
	}
	return ts, known, rest[1:j], strings.TrimPrefix(rest[j+1:], " "), nil
}

// checkTimestamps reads dir with babeltrace2 and fails t when an event's
// time goes back within its stream, lies outside its packet's
// [timestamp_begin, timestamp_end], or shares its timestamp with more than
// maxIdentical-1 neighbours. It returns what it saw of each stream.
func checkTimestamps(t *testing.T, dir string) map[string]*streamTimes {
	t.Helper()
	bt, err := exec.LookPath("babeltrace2")
	if err != nil {
		t.Fatal("babeltrace2 is required (scripts/setup.sh installs it)")
	}
	cmd := exec.Command(bt, dir, "-c", "sink.text.details", "-p", `compact=yes,with-metadata=no,color="never"`)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	streams, errs, perr := parseTimestamps(out, 20)
	_, _ = io.Copy(io.Discard, out)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("babeltrace2 %s: %v\n%.2000s", dir, err, stderr.String())
	}
	if perr != nil {
		t.Fatalf("babeltrace2 %s: %v", dir, perr)
	}
	for _, e := range errs {
		t.Error(e)
	}
	if len(streams) == 0 {
		t.Fatalf("babeltrace2 showed no stream of %s", dir)
	}
	return streams
}

// TestPipelineTimestamps records runs of the example pipeline while the
// recorder drains every few milliseconds, so that drains happen while the
// workers write, and checks every event's time through babeltrace2. How
// many drains fall inside a run depends on the machine's load, so the
// sender also forces one halfway through: at least one drain takes its cut
// while the router writes, on any machine.
func TestPipelineTimestamps(t *testing.T) {
	packets, runs := 100000, 3
	if testing.Short() {
		packets, runs = 20000, 1
	}
	for run := 0; run < runs; run++ {
		root := t.TempDir()
		cfg, err := ParseConfig([]byte("period: 2ms\ntarget_root: " + root + "\ndefault_policy:\n  backends: [ctf, pcapng]\n"))
		if err != nil {
			t.Fatal(err)
		}
		tr := trace.New()
		rec := New(tr, cfg, nil)
		ctx, cancel := context.WithCancel(context.Background())
		type result struct {
			st  Stats
			err error
		}
		done := make(chan result)
		if _, err := rec.Enable(); err != nil {
			t.Fatal(err)
		}
		go func() { st, err := rec.Run(ctx); done <- result{st, err} }()
		halfway := func() {
			if err := rec.Drain(true); err != nil {
				t.Error(err)
			}
		}
		res, err := pipeline.Run(context.Background(), tr, pipeline.Config{Packets: packets, Halfway: halfway})
		cancel()
		r := <-done
		if err != nil || r.err != nil {
			t.Fatal(err, r.err)
		}
		if res.Received != packets {
			t.Fatalf("pipeline delivered %d of %d packets", res.Received, packets)
		}
		streams := checkTimestamps(t, r.st.Dir)
		for _, s := range r.st.Streams {
			if s.Label != pipeline.LabelSender && s.Label != pipeline.LabelRouter {
				continue
			}
			t.Logf("run %d: %s: %d events written, %d discarded, %d CTF packets", run, s.Label, s.Events, s.Discarded, s.Packets)
			if s.Events+s.Discarded < uint64(packets) {
				t.Errorf("%s: %d events for %d packets", s.Label, s.Events, packets)
			}
			if s.Packets < 2 {
				t.Errorf("%s: %d CTF packets: no drain while the pipeline ran", s.Label, s.Packets)
			}
		}
		var total int
		for key, s := range streams {
			total += s.Events
			t.Logf("run %d: stream {%s}: %d events in %d packets (%d with discarded events), longest run of one timestamp %d",
				run, key, s.Events, s.Packets, s.Discarded, s.MaxRun)
		}
		var want uint64
		for _, s := range r.st.Streams {
			want += s.Events
		}
		if uint64(total) != want {
			t.Errorf("babeltrace2 read %d events, the recorder wrote %d", total, want)
		}
	}
}

func FuzzParseTimestamps(f *testing.F) {
	f.Add("[Unknown] {0 0 0} Stream beginning\n[1,000 1,000] {0 0 0} Packet beginning\n[1,005 1,005] {0 0 0} Event `Checkpoint` (7)\n[1,010 1,010] {0 0 0} Packet end\n")
	f.Add("[5 5] {1 0 0} Event `x` (1)\n[3 3] {1 0 0} Event `x` (1)\n[Unknown] {1 0 0} Stream end\n")
	f.Add("[1,2 {0\n")
	f.Fuzz(func(t *testing.T, s string) {
		streams, errs, err := parseTimestamps(strings.NewReader(s), 5)
		if err != nil {
			return
		}
		if len(errs) > 5+len(streams) {
			t.Errorf("%d errors with a limit of 5", len(errs))
		}
		for _, st := range streams {
			if st.MaxRun > st.Events {
				t.Errorf("run of %d in %d events", st.MaxRun, st.Events)
			}
		}
	})
}
