package analyze

import (
	"fmt"
	"strings"

	"github.com/dpperf/dpperf/profile/event"
	"github.com/dpperf/dpperf/profile/path"
	"github.com/dpperf/dpperf/profile/task"
)

// OptionsFor turns a task into analyzer options for path p; dev is the
// resolved device filter (0 for any).
func OptionsFor(tk *task.Task, p *path.Path, dev event.Dev) Options {
	opt := Options{Path: p, MaxOpen: tk.Profiling.Buffer.Records}
	opt.Filter.Dev = dev
	opt.Filter.Op, opt.Filter.HasOp = tk.Workload.Op()
	opt.Filter.MinBytes, opt.Filter.MaxBytes = tk.Workload.SizeRange()
	opt.Filter.Sample = tk.Profiling.Sample
	for _, g := range tk.Report.GroupBy {
		switch strings.ToLower(g) {
		case "type":
			opt.GroupBy.Type = true
		case "size":
			opt.GroupBy.Size = true
		case "session":
			opt.GroupBy.Session = true
		case "cpu":
			opt.GroupBy.CPU = true
		}
	}
	return opt
}

// FilterText describes the task's request filter for reports.
func FilterText(tk *task.Task, dev event.Dev) string {
	var parts []string
	if dev != 0 {
		parts = append(parts, "dev "+dev.String())
	}
	if tk.Workload.Type != "any" {
		parts = append(parts, "type "+tk.Workload.Type)
	}
	if lo, hi := tk.Workload.SizeRange(); lo == hi && lo != 0 {
		parts = append(parts, "size "+FormatBytes(lo))
	} else if lo != 0 || hi != 0 {
		parts = append(parts, fmt.Sprintf("size %s-%s", FormatBytes(lo), FormatBytes(hi)))
	}
	return strings.Join(parts, " ")
}
