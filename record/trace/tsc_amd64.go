package trace

// ticks reads the CPU's time-stamp counter.
//
//go:noescape
func ticks() uint64

// ticksAreNanos tells whether ticks counts nanoseconds already.
const ticksAreNanos = false
