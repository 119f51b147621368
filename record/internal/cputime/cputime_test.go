package cputime

import (
	"runtime"
	"testing"
	"time"
)

// spin burns CPU on the calling thread until its CPU time has grown by d:
// a fixed amount of work, whatever the wall clock does meanwhile.
func spin(d time.Duration) {
	for t0 := Thread(); Thread()-t0 < d; {
	}
}

// TestCountsBusyThread: a spinning thread's CPU time advances, and the
// process's CPU time, which includes it, advances too.
func TestCountsBusyThread(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	t0, p0 := Thread(), Process()
	spin(20 * time.Millisecond)
	th, pr := Thread()-t0, Process()-p0
	if th < 20*time.Millisecond || pr <= 0 {
		t.Errorf("thread %v, process %v after 20 ms of spinning", th, pr)
	}
}

// TestStealCounts: on Linux the counters advance while a thread spins, and
// the stolen share is a fraction.
func TestStealCounts(t *testing.T) {
	s0 := ReadSteal()
	if runtime.GOOS != "linux" {
		t.Skip("no /proc/stat")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	spin(50 * time.Millisecond)
	s1 := ReadSteal()
	if s1.Total <= s0.Total || s1.Stolen < s0.Stolen {
		t.Fatalf("counters did not advance: %+v then %+v", s0, s1)
	}
	if f := s0.Share(s1); f < 0 || f > 1 {
		t.Fatalf("stolen share %g", f)
	}
}
