package trace

import (
	"sync/atomic"
	"testing"
)

// TestStoreRelease: the store writes the value that Load reads (the
// assembly version relies on the value being atomic.Uint64's only word).
func TestStoreRelease(t *testing.T) {
	var x [3]atomic.Uint64
	storeRelease(&x[1], 0x0123456789abcdef)
	if x[0].Load() != 0 || x[1].Load() != 0x0123456789abcdef || x[2].Load() != 0 {
		t.Fatalf("%#x %#x %#x", x[0].Load(), x[1].Load(), x[2].Load())
	}
}
