//go:build !amd64

package trace

func ticks() uint64 { return uint64(nanotime()) }

const ticksAreNanos = true

func prefetchw(*byte) {}

const hasPrefetchw = false
