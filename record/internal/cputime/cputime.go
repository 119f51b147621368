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
