// Package task reads profiling task specifications (YAML, see format.md):
// which requests to profile (device, I/O type, size), how (sampling, time
// window, record buffer, online or offline) and what to report (contents,
// grouping, aggregators). It validates while reading and never needs a
// kernel.
package task

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/dpperf/dpperf/profile/event"
	"go.yaml.in/yaml/v3"
)

// Task is a validated profiling task.
type Task struct {
	Path      string    `yaml:"path"`
	Workload  Workload  `yaml:"workload"`
	Profiling Profiling `yaml:"profiling"`
	Report    Report    `yaml:"report"`
}

// Workload selects the requests to profile.
type Workload struct {
	Device  string `yaml:"device"` // "7,0", "loop0" or "" / "all"
	Type    string `yaml:"type"`   // read, write or any
	Size    Size   `yaml:"size"`   // exact size; 0 = any
	MinSize Size   `yaml:"min_size"`
	MaxSize Size   `yaml:"max_size"`
}

// Profiling says how to collect.
type Profiling struct {
	Mode     string   `yaml:"mode"` // offline or online
	Interval Duration `yaml:"interval"`
	Sample   uint32   `yaml:"sample"` // 1 of N requests
	Duration Duration `yaml:"duration"`
	Start    string   `yaml:"start"` // YYYY-MM-DD hh:mm:ss, optional
	End      string   `yaml:"end"`
	Buffer   Buffer   `yaml:"buffer"`
}

// Buffer bounds the records kept in memory.
type Buffer struct {
	Records  int    `yaml:"records"`   // open requests tracked at once
	WhenFull string `yaml:"when_full"` // overwrite or spill
	SpillDir string `yaml:"spill_dir"`
}

// Report says what to compute and how to group.
type Report struct {
	Contents    []string `yaml:"contents"`
	GroupBy     []string `yaml:"group_by"`
	Aggregators []string `yaml:"aggregators"`
}

// Contents and groupings understood by the analyzer.
var (
	allContents    = []string{"latency", "throughput", "breakdown", "queue"}
	allGroups      = []string{"type", "size", "session", "cpu"}
	allAggregators = []string{"min", "max", "avg", "p10", "p50", "p70", "p80", "p90", "p95", "p99", "p99.9", "dist"}
)

// Default returns the task used when none is given: all requests of the
// path, every request sampled, grouped by type and size.
func Default() *Task {
	t := &Task{}
	t.fill()
	return t
}

// Parse reads and validates a task. Errors name the YAML line or field.
func Parse(data []byte) (*Task, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var t Task
	if err := dec.Decode(&t); err != nil && !errors.Is(err, io.EOF) {
		s := strings.TrimPrefix(err.Error(), "yaml: ")
		s = strings.ReplaceAll(s, "unmarshal errors:\n  ", "")
		return nil, fmt.Errorf("parse task: %s", strings.Join(strings.Fields(s), " "))
	}
	t.fill()
	if err := t.validate(); err != nil {
		return nil, err
	}
	return &t, nil
}

func (t *Task) fill() {
	if t.Path == "" {
		t.Path = "block"
	}
	if t.Workload.Type == "" {
		t.Workload.Type = "any"
	}
	if t.Profiling.Mode == "" {
		t.Profiling.Mode = "offline"
	}
	if t.Profiling.Sample == 0 {
		t.Profiling.Sample = 1
	}
	if t.Profiling.Interval == 0 {
		t.Profiling.Interval = Duration(time.Second)
	}
	if t.Profiling.Buffer.Records == 0 {
		t.Profiling.Buffer.Records = 65536
	}
	if t.Profiling.Buffer.WhenFull == "" {
		t.Profiling.Buffer.WhenFull = "overwrite"
	}
	if len(t.Report.Contents) == 0 {
		t.Report.Contents = allContents
	}
	if len(t.Report.GroupBy) == 0 {
		t.Report.GroupBy = []string{"type", "size"}
	}
	if len(t.Report.Aggregators) == 0 {
		t.Report.Aggregators = []string{"min", "avg", "p10", "p50", "p70", "p80", "p90", "p95", "p99", "p99.9", "max"}
	}
}

func (t *Task) validate() error {
	w := &t.Workload
	if w.Type != "any" {
		if _, err := event.ParseOp(w.Type); err != nil {
			return fmt.Errorf("workload.type: %w", err)
		}
	}
	if w.Size != 0 && (w.MinSize != 0 || w.MaxSize != 0) {
		return fmt.Errorf("workload: give size or min_size/max_size, not both")
	}
	if w.MaxSize != 0 && w.MinSize > w.MaxSize {
		return fmt.Errorf("workload: min_size %d above max_size %d", w.MinSize, w.MaxSize)
	}
	p := &t.Profiling
	if p.Mode != "online" && p.Mode != "offline" {
		return fmt.Errorf("profiling.mode: %q (want online or offline)", p.Mode)
	}
	if p.Interval < Duration(10*time.Millisecond) {
		return fmt.Errorf("profiling.interval: %v is below 10ms", time.Duration(p.Interval))
	}
	if p.Duration < 0 {
		return fmt.Errorf("profiling.duration: negative")
	}
	for _, f := range []struct{ name, v string }{{"start", p.Start}, {"end", p.End}} {
		if f.v == "" {
			continue
		}
		if _, err := time.ParseInLocation(time.DateTime, f.v, time.Local); err != nil {
			return fmt.Errorf("profiling.%s: %q is not YYYY-MM-DD hh:mm:ss", f.name, f.v)
		}
	}
	if p.Buffer.Records < 16 || p.Buffer.Records > 1<<24 {
		return fmt.Errorf("profiling.buffer.records: %d (want 16..16777216)", p.Buffer.Records)
	}
	switch p.Buffer.WhenFull {
	case "overwrite":
	case "spill":
		if p.Buffer.SpillDir == "" {
			return fmt.Errorf("profiling.buffer: when_full spill needs spill_dir")
		}
	default:
		return fmt.Errorf("profiling.buffer.when_full: %q (want overwrite or spill)", p.Buffer.WhenFull)
	}
	if err := oneOf("report.contents", t.Report.Contents, allContents); err != nil {
		return err
	}
	if err := oneOf("report.group_by", t.Report.GroupBy, allGroups); err != nil {
		return err
	}
	return oneOf("report.aggregators", t.Report.Aggregators, allAggregators)
}

func oneOf(field string, got, allowed []string) error {
	for _, g := range got {
		ok := false
		for _, a := range allowed {
			ok = ok || strings.EqualFold(g, a)
		}
		if !ok {
			return fmt.Errorf("%s: unknown %q (want %s)", field, g, strings.Join(allowed, ", "))
		}
	}
	return nil
}

// Has reports whether the report should contain c.
func (r *Report) Has(c string) bool {
	for _, x := range r.Contents {
		if strings.EqualFold(x, c) {
			return true
		}
	}
	return false
}

// Op returns the I/O type filter; ok is false for "any".
func (w *Workload) Op() (op event.Op, ok bool) {
	if w.Type == "any" {
		return 0, false
	}
	op, _ = event.ParseOp(w.Type)
	return op, true
}

// SizeRange returns the inclusive byte range requests must fall in;
// max 0 means unbounded.
func (w *Workload) SizeRange() (lo, hi uint64) {
	if w.Size != 0 {
		return uint64(w.Size), uint64(w.Size)
	}
	return uint64(w.MinSize), uint64(w.MaxSize)
}

// Size is a byte count written as 4096, 4K, 128KiB or 1M.
type Size uint64

// UnmarshalYAML parses a size with an optional K/M/G suffix (powers of 2).
func (s *Size) UnmarshalYAML(n *yaml.Node) error {
	v, err := ParseSize(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %w", n.Line, err)
	}
	*s = v
	return nil
}

// ParseSize parses "4096", "4K", "4k", "4KiB", "128KB", "1M" (binary units).
func ParseSize(str string) (Size, error) {
	s := strings.TrimSpace(strings.ToUpper(str))
	s = strings.TrimSuffix(strings.TrimSuffix(s, "IB"), "B")
	mult := uint64(1)
	switch {
	case strings.HasSuffix(s, "K"):
		mult = 1 << 10
	case strings.HasSuffix(s, "M"):
		mult = 1 << 20
	case strings.HasSuffix(s, "G"):
		mult = 1 << 30
	}
	if mult != 1 {
		s = s[:len(s)-1]
	}
	v, err := strconv.ParseUint(s, 10, 32)
	if err != nil || v == 0 {
		return 0, fmt.Errorf("bad size %q (want e.g. 4096, 4K, 128K, 1M)", str)
	}
	return Size(v * mult), nil
}

// Duration is a time.Duration written as "1s", "500ms".
type Duration time.Duration

// UnmarshalYAML parses a Go duration string.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := time.ParseDuration(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: bad duration %q (want e.g. 1s, 500ms)", n.Line, n.Value)
	}
	*d = Duration(v)
	return nil
}

// Window returns the profiling window in local time; zero times mean
// unbounded.
func (p *Profiling) Window() (start, end time.Time) {
	if p.Start != "" {
		start, _ = time.ParseInLocation(time.DateTime, p.Start, time.Local)
	}
	if p.End != "" {
		end, _ = time.ParseInLocation(time.DateTime, p.End, time.Local)
	}
	return start, end
}
