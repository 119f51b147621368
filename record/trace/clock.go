package trace

import (
	"time"
	_ "unsafe" // for go:linkname
)

//go:linkname nanotime runtime.nanotime
func nanotime() int64

// Now returns the current event time in ticks of the event clock: the
// CPU's time-stamp counter on amd64 (cheaper to read than the system clock
// on virtual machines), monotonic nanoseconds elsewhere. A Clock converts
// ticks to nanoseconds.
func Now() uint64 { return ticks() }

// Clock converts event ticks to nanoseconds of the monotonic clock
// (CLOCK_MONOTONIC, the clock of Go's runtime and of bpf_ktime_get_ns).
type Clock struct {
	tick0     uint64
	mono0     int64
	nsPerTick float64
	// EpochOffset is added to monotonic ns to get ns since the Unix epoch.
	EpochOffset int64
}

// Calibrate measures the tick rate against the monotonic clock over about
// d (at least 1 ms where ticks are not nanoseconds already).
func Calibrate(d time.Duration) Clock {
	t0, m0 := pair()
	c := Clock{tick0: t0, mono0: m0, nsPerTick: 1, EpochOffset: time.Now().UnixNano() - nanotime()}
	if ticksAreNanos {
		c.tick0, c.mono0 = 0, 0
		return c
	}
	d = max(d, time.Millisecond)
	time.Sleep(d)
	t1, m1 := pair()
	if t1 > t0 && m1 > m0 {
		c.nsPerTick = float64(m1-m0) / float64(t1-t0)
	}
	return c
}

// pair reads ticks and the monotonic clock as close together as it can:
// it keeps the tightest of a few tries.
func pair() (uint64, int64) {
	var bt uint64
	var bm int64
	best := int64(1 << 62)
	for i := 0; i < 5; i++ {
		a := nanotime()
		t := ticks()
		b := nanotime()
		if b-a < best {
			best, bt, bm = b-a, t, a+(b-a)/2
		}
	}
	return bt, bm
}

// Nanos converts a tick value to monotonic nanoseconds.
func (c Clock) Nanos(t uint64) uint64 {
	d := int64(t - c.tick0) // wraps to negative for ticks before tick0
	return uint64(c.mono0 + int64(float64(d)*c.nsPerTick))
}

// NowNanos returns the current monotonic time in ns.
func NowNanos() uint64 { return uint64(nanotime()) }
