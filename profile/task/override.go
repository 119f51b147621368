package task

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/dpperf/dpperf/profile/event"
)

// Overrides are command-line settings that replace fields of a task file;
// zero values leave the field alone.
type Overrides struct {
	Path     string
	Device   string
	Type     string // read, write or any
	Size     string // "4K" or a range "4K-128K"
	GroupBy  string // comma-separated
	Contents string // comma-separated report contents
	Sample   uint
	Interval time.Duration // > 0 switches to online mode
}

// Load reads the task file (YAML, or the original profiler's format when
// the name ends in .ini; none: Default) and applies o. File errors are
// returned as is; errors in o name the flag.
func Load(file string, o Overrides) (*Task, error) {
	tk := Default()
	if file != "" {
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		parse := Parse
		if strings.HasSuffix(file, ".ini") {
			parse = ParseINI
		}
		if tk, err = parse(data); err != nil {
			return nil, err
		}
	}
	return tk, o.apply(tk)
}

func (o *Overrides) apply(tk *Task) error {
	if o.Path != "" {
		tk.Path = o.Path
	}
	if o.Device != "" {
		tk.Workload.Device = o.Device
	}
	if o.Type != "" {
		if _, err := event.ParseOp(o.Type); err != nil && o.Type != "any" {
			return &FlagError{"type", err}
		}
		tk.Workload.Type = o.Type
	}
	if o.Size != "" {
		lo, hi, isRange := strings.Cut(o.Size, "-")
		a, err := ParseSize(lo)
		if err != nil {
			return &FlagError{"size", err}
		}
		tk.Workload.Size, tk.Workload.MinSize, tk.Workload.MaxSize = a, 0, 0
		if isRange {
			b, err := ParseSize(hi)
			if err != nil || b < a {
				return &FlagError{"size", fmt.Errorf("bad range %q", o.Size)}
			}
			tk.Workload.Size, tk.Workload.MinSize, tk.Workload.MaxSize = 0, a, b
		}
	}
	if o.GroupBy != "" {
		groups := strings.Split(o.GroupBy, ",")
		if err := oneOf("group", groups, allGroups); err != nil {
			return &FlagError{"group", err}
		}
		tk.Report.GroupBy = groups
	}
	if o.Contents != "" {
		parts := strings.Split(o.Contents, ",")
		if err := oneOf("contents", parts, allContents); err != nil {
			return &FlagError{"contents", err}
		}
		tk.Report.Contents = parts
	}
	if o.Sample > 0 {
		tk.Profiling.Sample = uint32(o.Sample)
	}
	if o.Interval > 0 {
		if o.Interval < 10*time.Millisecond {
			return &FlagError{"interval", fmt.Errorf("%v is below 10ms", o.Interval)}
		}
		tk.Profiling.Mode, tk.Profiling.Interval = "online", Duration(o.Interval)
	}
	return nil
}

// FlagError is a bad override, named by its flag.
type FlagError struct {
	Flag string
	Err  error
}

func (e *FlagError) Error() string { return "-" + e.Flag + ": " + e.Err.Error() }

func (e *FlagError) Unwrap() error { return e.Err }
