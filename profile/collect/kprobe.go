package collect

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/dpperf/dpperf/profile/path"
)

// Kprobe events are defined in tracefs' global kprobe_events file, in a
// group of our own (dpperf_<pid>), named after the probed function so
// that the trace text names the path event's kprobe; the instance then
// enables them like tracepoints. The definition fetches the key fields
// from the function's arguments as the path's args say.

// HaveKprobes reports whether the kernel offers kprobe events, and why not.
func HaveKprobes() (bool, string) {
	if _, err := os.Stat(filepath.Join(Tracefs, "kprobe_events")); err != nil {
		return false, "kernel has no kprobes (no kprobe_events in tracefs; CONFIG_KPROBES off?)"
	}
	return true, ""
}

// kprobeStatus says whether path event e (with key fields key) can be
// probed here, and why not.
func kprobeStatus(e *path.Event, key []string) (bool, string) {
	if ok, why := HaveKprobes(); !ok {
		return false, why
	}
	for _, f := range key {
		if e.Args[f] == "" {
			return false, "the path gives no fetch argument for key field " + f + " of " + e.Kprobe
		}
	}
	f, err := os.Open(filepath.Join(Tracefs, "available_filter_functions"))
	if err != nil {
		return false, "cannot list probe-able functions: " + err.Error()
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if name, _, _ := strings.Cut(sc.Text(), " "); name == e.Kprobe {
			return true, ""
		}
	}
	return false, e.Kprobe + " is not a probe-able symbol here (inlined or module not loaded)"
}

// kprobeGroup is the kprobe event group of this process.
func kprobeGroup() string { return "dpperf_" + strconv.Itoa(os.Getpid()) }

// kprobeDef is the kprobe_events line defining e in group: the key fields
// in key order, then any other args in name order.
func kprobeDef(group string, e *path.Event, key []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "p:%s/%s %s", group, e.Kprobe, e.Kprobe)
	done := map[string]bool{}
	for _, f := range append(key, "cid", "dev", "qid", "sector") {
		if a := e.Args[f]; a != "" && !done[f] {
			fmt.Fprintf(&b, " %s=%s", f, a)
			done[f] = true
		}
	}
	return b.String()
}

// writeKprobeEvents appends line to kprobe_events (truncating the file
// would remove every kprobe event on the machine).
func writeKprobeEvents(line string) error {
	f, err := os.OpenFile(filepath.Join(Tracefs, "kprobe_events"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(line + "\n")
	return errors.Join(err, f.Close())
}

// removeKprobes deletes the kprobe events of group; events of groups of
// dpperf processes that no longer run too when stale is set.
func removeKprobes(group string, stale bool) {
	data, err := os.ReadFile(filepath.Join(Tracefs, "kprobe_events"))
	if err != nil {
		return
	}
	for _, line := range strings.Split(string(data), "\n") {
		def, _, _ := strings.Cut(line, " ")
		g, name, ok := strings.Cut(strings.TrimPrefix(def, "p:"), "/")
		if !ok || !strings.HasPrefix(g, "dpperf_") {
			continue
		}
		mine := g == group
		if !mine && stale {
			pid, err := strconv.Atoi(strings.TrimPrefix(g, "dpperf_"))
			_, serr := os.Stat(fmt.Sprintf("/proc/%d", pid))
			mine = err == nil && errors.Is(serr, os.ErrNotExist)
		}
		if mine {
			_ = writeKprobeEvents("-:" + g + "/" + name)
		}
	}
}
