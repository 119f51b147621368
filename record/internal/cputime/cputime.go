// Package cputime reads the CPU time of the calling thread and of the
// process, for benchmarks that report CPU time per event next to wall
// time: on a machine shared with other work, wall time also counts the
// time the thread waited for a core.
package cputime

import "time"

// Thread returns the user and system CPU time of the calling OS thread
// (lock the goroutine to its thread around the measurement), or 0 where
// the system does not tell.
func Thread() time.Duration { return usage(who.thread) }

// Process returns the user and system CPU time of the whole process.
func Process() time.Duration { return usage(who.process) }

// Steal is a reading of the machine's CPU time counters: the time every CPU
// spent, and of it the time a hypervisor ran something else while this
// machine wanted to run (steal), in clock ticks.
type Steal struct{ Total, Stolen uint64 }

// ReadSteal reads the counters; zero where the system does not tell.
func ReadSteal() Steal { return readSteal() }

// Share returns the fraction of CPU time stolen between s and a later
// reading.
func (s Steal) Share(later Steal) float64 {
	if later.Total <= s.Total {
		return 0
	}
	return float64(later.Stolen-s.Stolen) / float64(later.Total-s.Total)
}
