package record

import (
	"fmt"
	"time"

	"golang.org/x/sys/unix"
)

// drainerNice is the nice value of the drainer's thread where the process
// may lower it (CAP_SYS_NICE, or an RLIMIT_NICE of at least 30): the
// scheduler then gives the drainer, which sleeps most of the time, a core
// as soon as it wakes, and ten times the share of a thread at nice 0.
const drainerNice = -10

// raisePriority lowers the nice value of the calling thread (locked to its
// goroutine) to drainerNice and returns the function that restores it.
func raisePriority() (restore func(), err error) {
	tid := unix.Gettid()
	// getpriority(2) returns 20 - nice.
	prev, err := unix.Getpriority(unix.PRIO_PROCESS, tid)
	if err != nil {
		return nil, fmt.Errorf("read thread priority: %w", err)
	}
	if 20-prev <= drainerNice {
		return func() {}, nil
	}
	if err := unix.Setpriority(unix.PRIO_PROCESS, tid, drainerNice); err != nil {
		return nil, fmt.Errorf("set thread nice value %d: %w", drainerNice, err)
	}
	return func() { _ = unix.Setpriority(unix.PRIO_PROCESS, tid, 20-prev) }, nil
}

// sleep blocks the calling thread in the kernel for d. Unlike time.Sleep,
// waking up does not wait for another thread to run the Go timer and hand
// the goroutine back to its locked thread.
func sleep(d time.Duration) {
	ts := unix.NsecToTimespec(d.Nanoseconds())
	for unix.Nanosleep(&ts, &ts) == unix.EINTR {
	}
}
