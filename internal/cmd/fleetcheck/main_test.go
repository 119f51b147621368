package main

import (
	"math"
	"testing"
)

func TestWithinOneBucket(t *testing.T) {
	bounds := []float64{1e-6, 2e-6, 4e-6, 8e-6, math.Inf(1)}
	for _, c := range []struct {
		a, b float64
		want bool
	}{
		{1.5e-6, 1.9e-6, true},  // same bucket
		{2e-6, 2.1e-6, true},    // on a bound and just above it
		{0.5e-6, 3.9e-6, false}, // two buckets apart
		{1.2e-6, 3.9e-6, true},
		{2.1e-6, 8e-6, true}, // (2µs, 4µs] and (4µs, 8µs]
		{1.9e-6, 8e-6, false},
		{7e-6, 20e-6, true}, // last bound and +Inf
		{2e-6 * (1 + 1e-12), 1.5e-6, true},
	} {
		if got := withinOneBucket(bounds, c.a, c.b); got != c.want {
			t.Errorf("withinOneBucket(%g, %g) = %v", c.a, c.b, got)
		}
	}
	if got := bucketRange(bounds, 3e-6); got != "(2µs, 4µs]" {
		t.Errorf("bucketRange(3µs) = %q", got)
	}
	if got := bucketIndex(bounds, 2e-6*(1+1e-12)); got != 1 {
		t.Errorf("a hair above 2µs in bucket %d, want 1 (le=2µs)", got)
	}
}
