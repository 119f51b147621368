package kernel

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dpperf/dpperf/internal/bpftest"
)

// TestRecordTracepoints records real syscall tracepoints through BPF and
// reads the result with babeltrace2.
func TestRecordTracepoints(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("the kernel recorder test runs as root (CI and the developer machines are root)")
	}
	r, err := Open([]string{"syscalls:sys_enter_getppid", "sched:sched_switch"})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "kernel")
	if err := r.Start(Options{Dir: dir, Period: 20 * time.Millisecond, ClockOffsetNs: 0}); err != nil {
		t.Fatal(err)
	}
	// The recorder's own programs: other tests may load programs meanwhile.
	ours := bpftest.IDs(t, r.progs...)
	if len(ours) == 0 {
		t.Fatal("the recorder loaded no programs")
	}
	const calls = 300
	for i := 0; i < calls; i++ {
		syscall.Getppid()
		if i%100 == 0 {
			time.Sleep(25 * time.Millisecond) // several drain periods, and context switches
		}
	}
	st, err := r.Stop()
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range bpftest.StillLoaded(ours) {
		t.Errorf("BPF program %d still loaded after Stop", id)
	}
	if st.Events < calls {
		t.Errorf("recorded %d events, want at least %d", st.Events, calls)
	}
	rc := readRecording(t, dir)
	if rc.events != st.Events || rc.discarded != st.Lost {
		t.Errorf("streams hold %d events, %d discarded; stats say %d, %d", rc.events, rc.discarded, st.Events, st.Lost)
	}
	bt, err := exec.LookPath("babeltrace2")
	if err != nil {
		t.Fatal("babeltrace2 is required")
	}
	// Events only (stdout): a warning on stderr about discarded events
	// could otherwise land inside an event's line.
	out, err := exec.Command(bt, dir).Output()
	if err != nil {
		t.Fatalf("babeltrace2: %v\n%.3000s", err, out)
	}
	mine := fmt.Sprintf("tgid = %d,", os.Getpid())
	var getppid, switches int
	for _, l := range strings.Split(string(out), "\n") {
		switch {
		case strings.Contains(l, "syscalls:sys_enter_getppid:") && strings.Contains(l, mine):
			getppid++
			if !strings.Contains(l, "_syscall_nr = 110") {
				t.Fatalf("getppid event without syscall number 110: %s", l)
			}
		case strings.Contains(l, "sched:sched_switch:"):
			switches++
		}
	}
	if getppid != calls {
		t.Errorf("babeltrace2 shows %d getppid events of this process, want %d", getppid, calls)
	}
	if switches == 0 {
		t.Error("no sched_switch events")
	}
}
