package cfg

import (
	"testing"

	"github.com/dpperf/dpperf/bpfprog"
	"github.com/dpperf/dpperf/internal/testobj"
)

// TestPathOfErrors: paths that leave the graph are errors, never panics.
// (interp's TestPathOnGraph checks PathOf on executed paths.)
func TestPathOfErrors(t *testing.T) {
	p, err := bpfprog.LoadFile(testobj.Built(t, "fig2"), "")
	if err != nil {
		t.Fatal(err)
	}
	g, err := Build(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	last := int32(len(p.Insns) - 1)
	for _, path := range [][]int32{nil, {1}, {0, 0}, {last}, {0, last, last}, {-1}, {1 << 20}} {
		if edges, err := PathOf(g, path); err == nil {
			t.Errorf("PathOf(%v) = %v, want an error", path, edges)
		}
	}
}
