package profiling

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/dpperf/dpperf/internal/atomicfile"
	"github.com/dpperf/dpperf/internal/fail"
	"github.com/dpperf/dpperf/profile/analyze"
	"github.com/dpperf/dpperf/profile/collect"
	"github.com/dpperf/dpperf/profile/event"
	"github.com/dpperf/dpperf/profile/path"
	"github.com/dpperf/dpperf/profile/task"
)

// Setup is what a run or an analysis starts from: the task with the
// flags' overrides applied, its path and its device.
type Setup struct {
	File string // the task file, "" for none; errors about the task name it
	Task *task.Task
	Path *path.Path
	Dev  event.Dev // 0: any device
}

// Load reads the task file (none: the defaults) with o applied, looks up
// its path and resolves its device.
func Load(file string, o task.Overrides) (*Setup, error) {
	tk, err := task.Load(file, o)
	if err != nil {
		var fe *task.FlagError
		if errors.As(err, &fe) {
			return nil, fail.Usagef("%v", err)
		}
		return nil, fail.Input(file, err)
	}
	p, err := path.Lookup(tk.Path)
	if err != nil {
		return nil, fail.Input("", err)
	}
	dev, err := collect.ResolveDev(tk.Workload.Device)
	if err != nil {
		return nil, fail.Input(file, err)
	}
	return &Setup{File: file, Task: tk, Path: p, Dev: dev}, nil
}

// online says whether the task asks for a report per interval.
func (s *Setup) online() bool { return s.Task.Profiling.Mode == "online" }

// interval is the profile of the records of one interval, for online
// reports.
func (s *Setup) interval(a *analyze.Aggregator) *analyze.Profile {
	ip := analyze.Summarize(a, s.Path, s.Task.Profiling.Sample)
	ip.Source = "interval"
	ip.Restrict(s.Task.Report.Contents)
	return ip
}

// summarize is the profile of agg, taken from source, with the task's
// filter and groups.
func (s *Setup) summarize(agg *analyze.Aggregator, source string) *analyze.Profile {
	prof := analyze.Summarize(agg, s.Path, s.Task.Profiling.Sample)
	prof.Source = source
	prof.Filter = analyze.FilterText(s.Task, s.Dev)
	prof.GroupBy = s.Task.Report.GroupBy
	return prof
}

// options are the analyzer's options for the task; report, when set,
// gets the profile of each interval of an online task.
func (s *Setup) options(report func(*analyze.Profile)) analyze.Options {
	opt := analyze.OptionsFor(s.Task, s.Path, s.Dev)
	if s.online() && report != nil {
		opt.Interval = time.Duration(s.Task.Profiling.Interval)
		opt.OnInterval = func(a *analyze.Aggregator) { report(s.interval(a)) }
	}
	return opt
}

// openSpill starts the record file of a task whose buffer spills to disk
// (nil when it does not); finish commits it and notes where it went.
func (s *Setup) openSpill(notes io.Writer) (*analyze.RecordWriter, func() error, error) {
	if s.Task.Profiling.Buffer.WhenFull != "spill" {
		return nil, func() error { return nil }, nil
	}
	name := filepath.Join(s.Task.Profiling.Buffer.SpillDir, "records-"+s.Path.Name+".csv")
	f, err := atomicfile.Create(name)
	if err != nil {
		return nil, nil, err
	}
	rw := analyze.NewRecordWriter(f, s.Path)
	return rw, func() error {
		if err := rw.Close(); err != nil {
			f.Abort()
			return fmt.Errorf("write %s: %w", name, err)
		}
		if err := f.Commit(); err != nil {
			return err
		}
		fmt.Fprintf(notes, "profile: records written to %s\n", name)
		return nil
	}, nil
}
