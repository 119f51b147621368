package task

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ParseINI reads a task file in the original profiler's INI format
// (sections Workload, Execution, Profiling, Report; KEY=value lines, ';'
// and '#' comments, quoted or bare values) and returns the equivalent
// task. Keys of [Execution] are accepted and ignored: this profiler
// measures rather than assumes bandwidth limits. A list of IO_SIZE values
// is widened to the range from its smallest to its largest size. Errors
// name the line.
func ParseINI(data []byte) (*Task, error) {
	t := &Task{}
	t.Report.Contents = []string{}
	t.Report.GroupBy = []string{}
	section := ""
	var sizes []Size
	var minSize, maxSize Size
	for n, raw := range strings.Split(string(data), "\n") {
		line := strings.TrimSpace(raw)
		if i := strings.IndexAny(line, ";#"); i >= 0 && !inQuotes(line, i) {
			line = strings.TrimSpace(line[:i])
		}
		if line == "" {
			continue
		}
		at := fmt.Sprintf("line %d", n+1)
		if strings.HasPrefix(line, "[") {
			if !strings.HasSuffix(line, "]") {
				return nil, fmt.Errorf("%s: bad section header %q", at, line)
			}
			section = strings.ToLower(strings.TrimSpace(line[1 : len(line)-1]))
			switch section {
			case "workload", "execution", "profiling", "report":
			default:
				return nil, fmt.Errorf("%s: unknown section [%s]", at, section)
			}
			continue
		}
		key, val, ok := strings.Cut(line, "=")
		if !ok {
			return nil, fmt.Errorf("%s: want KEY=value, got %q", at, line)
		}
		key = strings.ToUpper(strings.TrimSpace(key))
		val = strings.Trim(strings.TrimSpace(val), `"'`)
		bad := func(what string) error { return fmt.Errorf("%s: %s: %s %q", at, key, what, val) }
		switch section + "." + key {
		case "workload.SESSION_NAME":
			if val != "default_session" {
				t.Workload.Device = val
			}
		case "workload.IO_TYPE":
			switch strings.ToLower(val) {
			case "read", "write":
				t.Workload.Type = strings.ToLower(val)
			case "both", "any", "":
				t.Workload.Type = "any"
			default:
				return nil, bad("want read, write or both, got")
			}
		case "workload.IO_SIZE":
			for _, s := range strings.Split(val, ",") {
				v, err := ParseSize(s)
				if err != nil {
					return nil, fmt.Errorf("%s: IO_SIZE: %w", at, err)
				}
				sizes = append(sizes, v)
			}
		case "workload.MIN_IO_SIZE", "workload.MAX_IO_SIZE":
			v, err := ParseSize(val)
			if err != nil {
				return nil, fmt.Errorf("%s: %s: %w", at, key, err)
			}
			if key == "MIN_IO_SIZE" {
				minSize = v
			} else {
				maxSize = v
			}
		case "execution.NETWORK_BANDWIDTH_LIMIT", "execution.NVME_DRIVE_BANDWIDTH_LIMIT":
		case "profiling.IS_ONLINE":
			b, err := strconv.ParseBool(val)
			if err != nil {
				return nil, bad("want true or false, got")
			}
			t.Profiling.Mode = map[bool]string{true: "online", false: "offline"}[b]
		case "profiling.DATA_DIR":
			t.Profiling.Buffer.SpillDir = val
		case "profiling.TIME_INTERVAL":
			secs, err := strconv.ParseFloat(val, 64)
			if err != nil || secs <= 0 || secs > 86400 {
				return nil, bad("want seconds, got")
			}
			t.Profiling.Interval = Duration(time.Duration(secs * float64(time.Second)))
		case "profiling.FREQUENCY":
			v, err := strconv.ParseUint(val, 10, 32)
			if err != nil || v == 0 {
				return nil, bad("want a positive count, got")
			}
			t.Profiling.Sample = uint32(v)
		case "profiling.BUFFER_SIZE":
			mb, err := strconv.ParseUint(val, 10, 32)
			if err != nil || mb == 0 {
				return nil, bad("want MB, got")
			}
			// The original keeps ~200-byte records; our open-request
			// buffer is bounded in records.
			t.Profiling.Buffer.Records = int(min(mb<<20/256, 1<<24))
		case "profiling.AGGREGATION":
			switch a := strings.ToLower(val); a {
			case "min", "max", "avg", "dist":
				t.Report.Aggregators = []string{a}
			default:
				return nil, bad("want min, max, avg or dist, got")
			}
		case "report.ENABLE_LATENCY_DISTRIBUTION", "report.ENABLE_THROUGHPUT", "report.ENABLE_LATENCY_BREAKDOWN", "report.ENABLE_QUEUE_LENGTH",
			"report.ENABLE_GROUP_BY_SIZE", "report.ENABLE_GROUP_BY_TYPE", "report.ENABLE_GROUP_BY_SESSION":
			on, err := strconv.ParseBool(val)
			if err != nil {
				return nil, bad("want true or false, got")
			}
			if !on {
				continue
			}
			name := map[string]string{
				"ENABLE_LATENCY_DISTRIBUTION": "latency", "ENABLE_THROUGHPUT": "throughput",
				"ENABLE_LATENCY_BREAKDOWN": "breakdown", "ENABLE_QUEUE_LENGTH": "queue",
				"ENABLE_GROUP_BY_SIZE": "size", "ENABLE_GROUP_BY_TYPE": "type", "ENABLE_GROUP_BY_SESSION": "session",
			}[key]
			if strings.HasPrefix(key, "ENABLE_GROUP_BY_") {
				t.Report.GroupBy = append(t.Report.GroupBy, name)
			} else {
				t.Report.Contents = append(t.Report.Contents, name)
			}
		default:
			if section == "" {
				return nil, fmt.Errorf("%s: %s outside a section", at, key)
			}
			return nil, fmt.Errorf("%s: unknown key %s in [%s]", at, key, section)
		}
	}
	switch {
	case minSize != 0 || maxSize != 0:
		t.Workload.MinSize, t.Workload.MaxSize = minSize, maxSize
	case len(sizes) == 1:
		t.Workload.Size = sizes[0]
	case len(sizes) > 1:
		lo, hi := sizes[0], sizes[0]
		for _, s := range sizes {
			lo, hi = min(lo, s), max(hi, s)
		}
		t.Workload.MinSize, t.Workload.MaxSize = lo, hi
	}
	if t.Profiling.Mode == "offline" && t.Profiling.Buffer.SpillDir != "" {
		t.Profiling.Buffer.WhenFull = "spill"
	}
	if len(t.Report.Contents) == 0 {
		t.Report.Contents = nil
	}
	if len(t.Report.GroupBy) == 0 {
		t.Report.GroupBy = nil
	}
	t.fill()
	if err := t.validate(); err != nil {
		return nil, err
	}
	return t, nil
}

func inQuotes(s string, i int) bool {
	return strings.Count(s[:i], `"`)%2 == 1
}
