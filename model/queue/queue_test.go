package queue

import (
	"math"
	"testing"
)

func near(a, b, tol float64) bool {
	if math.IsInf(a, 0) || math.IsInf(b, 0) {
		return a == b
	}
	return math.Abs(a-b) <= tol*math.Max(1, math.Abs(b))
}

// bruteForce sums the M/M/1/N distribution directly.
func bruteForce(rho float64, n int) (probs []float64, l float64) {
	z := 0.0
	for k := 0; k <= n; k++ {
		z += math.Pow(rho, float64(k))
	}
	for k := 0; k <= n; k++ {
		p := math.Pow(rho, float64(k)) / z
		probs = append(probs, p)
		l += float64(k) * p
	}
	return
}

func TestAgainstDefinition(t *testing.T) {
	for _, rho := range []float64{0.1, 0.5, 0.8, 0.99, 1, 1.2, 3} {
		for _, n := range []int{1, 2, 5, 20} {
			probs, l := bruteForce(rho, n)
			for k, p := range probs {
				if got := Prob(rho, float64(n), float64(k)); !near(got, p, 1e-9) {
					t.Errorf("Prob(%v,%d,%d) = %v, want %v", rho, n, k, got, p)
				}
			}
			if got := MeanInSystem(rho, float64(n)); !near(got, l, 1e-9) {
				t.Errorf("L(%v,%d) = %v, want %v", rho, n, got, l)
			}
			// Little: W = L/λe, Q = W - 1/μ; with μ = 1, λ = ρ.
			lamE := rho * (1 - probs[n])
			want := l/lamE - 1
			if got := WaitFactor(rho, float64(n)); !near(got, want, 1e-8) {
				t.Errorf("WaitFactor(%v,%d) = %v, want %v", rho, n, got, want)
			}
		}
	}
}

func TestTextbook(t *testing.T) {
	// M/M/1/3 at ρ = 0.5: P0 = 0.5/(1-0.0625) = 8/15, P3 = 1/15,
	// L = (0·8 + 1·4 + 2·2 + 3·1)/15 = 11/15.
	if got := Block(0.5, 3); !near(got, 1.0/15, 1e-12) {
		t.Errorf("Block = %v", got)
	}
	if got := MeanInSystem(0.5, 3); !near(got, 11.0/15, 1e-12) {
		t.Errorf("L = %v", got)
	}
	// M/M/1: ρ = 0.8 waits 4 service times, holds 4 requests.
	if got := WaitFactor(0.8, math.Inf(1)); !near(got, 4, 1e-12) {
		t.Errorf("M/M/1 wait = %v", got)
	}
	if got := MeanInSystem(0.8, math.Inf(1)); !near(got, 4, 1e-12) {
		t.Errorf("M/M/1 L = %v", got)
	}
	// N = 1: no waiting room, never any wait; blocking is ρ/(1+ρ) (Erlang B, one server).
	if got := WaitFactor(0.7, 1); !near(got, 0, 1e-12) {
		t.Errorf("N=1 wait = %v", got)
	}
	if got := Block(0.7, 1); !near(got, 0.7/1.7, 1e-12) {
		t.Errorf("N=1 block = %v", got)
	}
}

func TestLimits(t *testing.T) {
	for _, n := range []float64{1, 2, 7, 64} {
		at := WaitFactor(1, n)
		if !near(at, (n-1)/2, 1e-12) {
			t.Errorf("WaitFactor(1,%v) = %v", n, at)
		}
		for _, eps := range []float64{1e-5, -1e-5} {
			if got := WaitFactor(1+eps, n); !near(got, at, 1e-3) {
				t.Errorf("WaitFactor(1%+g,%v) = %v, want ~%v", eps, n, got, at)
			}
			if got := MeanInSystem(1+eps, n); !near(got, n/2, 1e-3) {
				t.Errorf("L(1%+g,%v) = %v", eps, n, got)
			}
			if got := Block(1+eps, n); !near(got, 1/(n+1), 1e-3) {
				t.Errorf("Block(1%+g,%v) = %v", eps, n, got)
			}
		}
	}
	// N → ∞ approaches M/M/1 below saturation.
	for _, rho := range []float64{0.3, 0.9} {
		if got := WaitFactor(rho, 2000); !near(got, rho/(1-rho), 1e-9) {
			t.Errorf("N→∞ wait(%v) = %v", rho, got)
		}
		if got := Block(rho, 2000); got > 1e-20 {
			t.Errorf("N→∞ block(%v) = %v", rho, got)
		}
	}
	// Beyond saturation with a finite queue the wait tends to N-1 service times.
	if got := WaitFactor(1e6, 10); !near(got, 9, 1e-4) {
		t.Errorf("ρ→∞ wait = %v", got)
	}
	if got := WaitFactor(50, 1e4); math.IsNaN(got) || math.IsInf(got, 0) {
		t.Errorf("large ρ, large N: %v", got)
	}
}

func TestMonotone(t *testing.T) {
	// Property: the wait and the blocking grow with ρ for a fixed N, and
	// the wait grows with N for a fixed ρ.
	for _, n := range []float64{2, 8, 32} {
		prevW, prevB := -1.0, -1.0
		for rho := 0.05; rho < 4; rho += 0.05 {
			w, b := WaitFactor(rho, n), Block(rho, n)
			if w < prevW-1e-9 || b < prevB-1e-12 {
				t.Fatalf("not monotone at ρ=%v N=%v: w %v<%v b %v<%v", rho, n, w, prevW, b, prevB)
			}
			prevW, prevB = w, b
		}
	}
	for _, rho := range []float64{0.5, 1.5} {
		prev := -1.0
		for n := 1.0; n < 50; n++ {
			w := WaitFactor(rho, n)
			if w < prev {
				t.Fatalf("wait not growing with N at ρ=%v N=%v", rho, n)
			}
			prev = w
		}
	}
}

func TestStatsMatches(t *testing.T) {
	for _, rho := range []float64{0, 0.2, 0.999999, 1, 1.3, 10} {
		for _, n := range []float64{1, 3, 2.5, 40, math.Inf(1)} {
			w, b := Stats(rho, n)
			if !near(w, WaitFactor(rho, n), 1e-9) || !near(b, Block(rho, n), 1e-9) {
				t.Errorf("Stats(%v,%v) = %v,%v; want %v,%v", rho, n, w, b, WaitFactor(rho, n), Block(rho, n))
			}
		}
	}
}
