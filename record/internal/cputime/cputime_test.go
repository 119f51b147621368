package cputime

import (
	"runtime"
	"testing"
	"time"
)

// TestCountsBusyThread spins for 50 ms of wall time: the thread's CPU time
// grows by at most that much, and by something, and the process's by at
// least the thread's, give or take the kernel's scheduler tick: it scales
// the time of a thread and of a process from tick samples separately, and
// under load the process's was seen 0.4 ms below its thread's.
func TestCountsBusyThread(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	t0, p0 := Thread(), Process()
	start := time.Now()
	for time.Since(start) < 50*time.Millisecond {
	}
	wall := time.Since(start)
	th, pr := Thread()-t0, Process()-p0
	if th <= 0 || th > wall+10*time.Millisecond || pr < th-5*time.Millisecond {
		t.Errorf("thread %v, process %v over %v of wall time", th, pr, wall)
	}
}

// TestStealCounts: on Linux the counters advance while a thread spins, and
// the stolen share is a fraction.
func TestStealCounts(t *testing.T) {
	s0 := ReadSteal()
	if runtime.GOOS != "linux" {
		t.Skip("no /proc/stat")
	}
	start := time.Now()
	for time.Since(start) < 50*time.Millisecond {
	}
	s1 := ReadSteal()
	if s1.Total <= s0.Total || s1.Stolen < s0.Stolen {
		t.Fatalf("counters did not advance: %+v then %+v", s0, s1)
	}
	if f := s0.Share(s1); f < 0 || f > 1 {
		t.Fatalf("stolen share %g", f)
	}
}
