package bound

import (
	"fmt"
	"runtime/metrics"
)

// The search's memory. The enumeration keeps an element for every path
// prefix it has produced (pathenum's lists), so its state grows with the
// paths checked: on a program whose paths are nearly all contradictory
// (build/bpf/explode_far.o) that is about 130 bytes a path, 750 MB a
// minute at 54,000 paths/s. SearchOptions.MaxHeap ends such a search like
// MaxChecks does: with the best bound so far, an intermediate one that
// every slower path is known impossible under.

// heapCheckEvery is how many dispatch steps pass between two readings of
// the heap's size.
const heapCheckEvery = 4096

// heapFull reads the heap's size now and then and reports whether it
// has reached SearchOptions.MaxHeap; once reached, it stays reached.
func (s *search) heapFull() bool {
	if s.opts.MaxHeap <= 0 {
		return false
	}
	if s.heapStop {
		return true
	}
	s.heapTick++
	if s.heapTick%heapCheckEvery != 0 {
		return false
	}
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(sample)
	if sample[0].Value.Kind() == metrics.KindUint64 && sample[0].Value.Uint64() >= uint64(s.opts.MaxHeap) {
		s.heapStop = true
	}
	return s.heapStop
}

// heapNote says why a search that reached MaxHeap ended.
func (s *search) heapNote() string {
	return fmt.Sprintf("the search ended when its heap reached %d MiB (the memory limit): the bound is intermediate, every slower path impossible", s.opts.MaxHeap>>20)
}
