package trace

// ticks reads the CPU's time-stamp counter.
//
//go:noescape
func ticks() uint64

// ticksAreNanos tells whether ticks counts nanoseconds already.
const ticksAreNanos = false

// hasPrefetchw tells whether the CPU has PREFETCHW (CPUID 0x80000001,
// ECX bit 8), which older CPUs may not decode.
var hasPrefetchw = func() bool {
	maxLeaf, _ := cpuid(0x80000000)
	if maxLeaf < 0x80000001 {
		return false
	}
	_, ecx := cpuid(0x80000001)
	return ecx&(1<<8) != 0
}()

// cpuid returns EAX and ECX of CPUID leaf (subleaf 0).
func cpuid(leaf uint32) (eax, ecx uint32)

// prefetchw asks the CPU to fetch the cache line at p for writing. The
// producer calls it for a line a few records ahead, so that the stores of
// a record do not wait for the line to come from the consumer's cache.
//
//go:noescape
func prefetchw(p *byte)
