package collect

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/dpperf/dpperf/profile/event"
	"github.com/dpperf/dpperf/profile/tracetext"
)

// TraceFS collects any path's tracepoints through a private tracefs
// instance (instances/dpperf-<pid>), so it neither disturbs nor is
// disturbed by other tracing users. Filtering by device happens in the
// kernel (event filters); type, size and sampling in the analyzer.
type TraceFS struct {
	dir     string
	pipe    *os.File
	rd      *tracetext.Reader
	status  []Status
	once    sync.Once
	stop    bool
	kprobes bool // kprobe events defined in kprobeGroup()
	mu      sync.Mutex
}

// OpenTraceFS creates the instance, enables the path's tracepoints and
// starts tracing.
func OpenTraceFS(cfg Config) (c *TraceFS, err error) {
	if err := needRoot(); err != nil {
		return nil, err
	}
	if err := EnsureTracefs(); err != nil {
		return nil, err
	}
	removeStaleInstances()
	c = &TraceFS{dir: filepath.Join(Tracefs, "instances", fmt.Sprintf("dpperf-%d", os.Getpid()))}
	if err := os.Mkdir(c.dir, 0o755); err != nil {
		return nil, fmt.Errorf("create tracefs instance: %w", err)
	}
	defer func() {
		if err != nil {
			c.Close()
		}
	}()
	if cfg.BufferKB > 0 {
		if err := c.write("buffer_size_kb", strconv.Itoa(cfg.BufferKB)); err != nil {
			return nil, err
		}
	}
	// CLOCK_MONOTONIC, as the BPF collector's bpf_ktime_get_ns. The
	// default "local" clock is clamped to jiffies where the TSC is not
	// stable (under qemu's emulation whole runs of a request's events
	// came out with one timestamp); kernels without it keep their default.
	_ = c.write("trace_clock", "mono")
	attached := 0
	for i := range cfg.Path.Events {
		e := &cfg.Path.Events[i]
		st := Status{Name: e.Name, Probe: e.Tracepoint}
		if cfg.Skip != nil && cfg.Skip(i) {
			st.Reason = "recorded by the other host"
			c.status = append(c.status, st)
			continue
		}
		sys, name := e.TraceName()
		if e.Kprobe != "" {
			st.Probe = "kprobe:" + e.Kprobe
			key := cfg.Path.EventKey(i)
			ok, why := kprobeStatus(e, key)
			if ok {
				if err := writeKprobeEvents(kprobeDef(kprobeGroup(), e, key)); err != nil {
					ok, why = false, "define kprobe event: "+err.Error()
				}
			}
			if !ok {
				st.Reason = why
				c.status = append(c.status, st)
				continue
			}
			c.kprobes = true
			sys, name = kprobeGroup(), e.Kprobe
		}
		evdir := filepath.Join("events", sys, name)
		if _, err := os.Stat(filepath.Join(c.dir, evdir)); err != nil {
			st.Reason = "tracepoint absent in this kernel (module not loaded?)"
			c.status = append(c.status, st)
			continue
		}
		if cfg.Dev != 0 && sys == "block" {
			if err := c.write(filepath.Join(evdir, "filter"), fmt.Sprintf("dev == %d", uint32(cfg.Dev))); err != nil {
				return nil, err
			}
		}
		if err := c.write(filepath.Join(evdir, "enable"), "1"); err != nil {
			return nil, err
		}
		st.Attached = true
		attached++
		c.status = append(c.status, st)
	}
	if attached < 2 {
		return nil, fmt.Errorf("tracefs collector: fewer than two events of path %s can be observed", cfg.Path.Name)
	}
	c.pipe, err = os.Open(filepath.Join(c.dir, "trace_pipe"))
	if err != nil {
		return nil, fmt.Errorf("open trace_pipe: %w", err)
	}
	c.rd, err = tracetext.NewReader(&stopReader{c}, cfg.Path)
	if err != nil {
		return nil, err
	}
	if err := c.write("tracing_on", "1"); err != nil {
		return nil, err
	}
	return c, nil
}

const stopMarker = "dpperf-profile-stop"

// stopReader ends the text stream at the marker Stop writes.
type stopReader struct{ c *TraceFS }

func (s *stopReader) Read(p []byte) (int, error) {
	s.c.mu.Lock()
	stopped := s.c.stop
	s.c.mu.Unlock()
	n, err := s.c.pipe.Read(p)
	if n > 0 && strings.Contains(string(p[:n]), stopMarker) {
		i := strings.Index(string(p[:n]), stopMarker)
		// Drop the marker line; everything before it is delivered.
		j := strings.LastIndexByte(string(p[:i]), '\n')
		return j + 1, io.EOF
	}
	if stopped && n == 0 {
		return 0, io.EOF
	}
	return n, err
}

func (c *TraceFS) write(name, value string) error {
	if err := os.WriteFile(filepath.Join(c.dir, name), []byte(value), 0); err != nil {
		return fmt.Errorf("tracefs %s: %w", name, err)
	}
	return nil
}

// Next returns the next event, io.EOF after Stop drained the buffer.
func (c *TraceFS) Next() (event.Event, error) {
	ev, err := c.rd.Next()
	if errors.Is(err, io.EOF) {
		return ev, io.EOF
	}
	return ev, err
}

// Status lists the path events and whether they are attached.
func (c *TraceFS) Status() []Status { return c.status }

// Lost sums the per-CPU overrun counters of the instance.
func (c *TraceFS) Lost() int64 {
	var sum int64
	cpus, _ := filepath.Glob(filepath.Join(c.dir, "per_cpu", "cpu*", "stats"))
	for _, f := range cpus {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(data), "\n") {
			if v, ok := strings.CutPrefix(line, "overrun: "); ok {
				n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				sum += n
			}
		}
	}
	if c.rd != nil {
		sum += c.rd.Stats().Lost
	}
	return sum
}

// Stop ends tracing: a marker written into the instance's buffer wakes
// the reader, which returns the events before it and then io.EOF.
func (c *TraceFS) Stop() {
	c.once.Do(func() {
		c.mu.Lock()
		c.stop = true
		c.mu.Unlock()
		if err := c.write("trace_marker", stopMarker+"\n"); err != nil {
			c.pipe.Close()
		}
		_ = c.write("tracing_on", "0")
	})
}

// Close disables the events and removes the instance.
func (c *TraceFS) Close() error {
	if c.pipe != nil {
		c.Stop()
		c.pipe.Close()
	}
	if c.dir == "" {
		return nil
	}
	_ = c.write("tracing_on", "0")
	// Removing an instance disables its events and frees its buffers.
	if err := os.Remove(c.dir); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove tracefs instance %s: %w", c.dir, err)
	}
	c.dir = ""
	if c.kprobes {
		removeKprobes(kprobeGroup(), false)
		c.kprobes = false
	}
	return nil
}

// removeStaleInstances removes instances left by dpperf processes that no
// longer run (killed before they could clean up).
func removeStaleInstances() {
	dirs, _ := filepath.Glob(filepath.Join(Tracefs, "instances", "dpperf-*"))
	for _, d := range dirs {
		pid, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(d), "dpperf-"))
		if err != nil || pid == os.Getpid() {
			continue
		}
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); errors.Is(err, os.ErrNotExist) {
			os.Remove(d)
		}
	}
	removeKprobes("", true)
}
