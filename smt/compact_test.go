package smt

import "testing"

// TestCompact: a chain of stores that writes indexes again keeps one
// store per index, the latest, and reads the same everywhere.
func TestCompact(t *testing.T) {
	a := ConstArray(32, BV(8, 7))
	for k, idx := range []uint64{3, 5, 3, 9, 5, 3} {
		var err error
		if a, err = Store(a, BV(32, idx), BV(8, uint64(k))); err != nil {
			t.Fatal(err)
		}
	}
	c := Compact(a)
	if c.Stores() != 3 || a.Stores() != 6 {
		t.Fatalf("stores: %d compacted from %d, want 3 from 6", c.Stores(), a.Stores())
	}
	for _, idx := range []uint64{0, 3, 5, 9, 10} {
		x, _ := selectAt(a, BV(32, idx))
		y, _ := selectAt(c, BV(32, idx))
		if x != y {
			t.Errorf("index %d: %v before, %v compacted", idx, x, y)
		}
	}
}
