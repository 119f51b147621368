package record

import (
	"errors"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

func TestRaisePriorityRestores(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	tid := unix.Gettid()
	nice := func() int {
		p, err := unix.Getpriority(unix.PRIO_PROCESS, tid)
		if err != nil {
			t.Fatal(err)
		}
		return 20 - p
	}
	before := nice()
	restore, err := raisePriority()
	if errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES) {
		t.Skipf("the process may not raise priorities: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if got := nice(); got != min(before, drainerNice) {
		t.Errorf("nice %d while draining, want %d", got, min(before, drainerNice))
	}
	restore()
	if got := nice(); got != before {
		t.Errorf("nice %d after restore, want %d", got, before)
	}
}
