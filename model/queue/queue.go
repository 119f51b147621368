// Package queue holds the closed forms of the M/M/1/N queue that the model
// uses for every engine of an IP (equations 9–12 of the LogNIC model), with
// their ρ → 1 and N → ∞ limits.
//
// N counts every request in the system, the one in service included, so
// N = 1 means no waiting room. N = +Inf gives the M/M/1 queue.
package queue

import "math"

// nearOne is how close ρ must be to 1 for the ρ = 1 forms to be used.
const nearOne = 1e-9

// Prob returns Pro_k, the probability of k requests in the system
// (equation 10): ρ^k (1-ρ) / (1-ρ^(N+1)).
func Prob(rho, n float64, k float64) float64 {
	if k < 0 || k > n {
		return 0
	}
	if math.IsInf(n, 1) {
		if rho >= 1 {
			return 0
		}
		return (1 - rho) * math.Pow(rho, k)
	}
	if math.Abs(rho-1) < nearOne {
		return 1 / (n + 1)
	}
	// ρ^k(1-ρ)/(1-ρ^(N+1)); for ρ > 1 divide through by ρ^(N+1).
	if rho > 1 {
		r := 1 / rho
		return math.Pow(r, n-k) * (1 - r) / (1 - math.Pow(r, n+1))
	}
	return math.Pow(rho, k) * (1 - rho) / (1 - math.Pow(rho, n+1))
}

// Block returns Pro_N, the probability that an arriving request finds the
// queue full and is dropped.
func Block(rho, n float64) float64 { return Prob(rho, n, n) }

// MeanInSystem returns L = Σ k·Pro_k, the mean number of requests in the
// system: ρ/(1-ρ) - (N+1)ρ^(N+1)/(1-ρ^(N+1)); N/2 at ρ = 1.
func MeanInSystem(rho, n float64) float64 {
	if math.IsInf(n, 1) {
		if rho >= 1 {
			return math.Inf(1)
		}
		return rho / (1 - rho)
	}
	if math.Abs(rho-1) < nearOne {
		return n / 2
	}
	if rho > 1 {
		// Mirror: L(ρ) = N - L(1/ρ).
		return n - MeanInSystem(1/rho, n)
	}
	return rho/(1-rho) - (n+1)*math.Pow(rho, n+1)/(1-math.Pow(rho, n+1))
}

// WaitFactor returns Q·μ, the mean waiting time before service of an
// accepted request in units of the mean service time (equation 12):
// ρ/(1-ρ) - Nρ^N/(1-ρ^N), with (N-1)/2 at ρ = 1 and ρ/(1-ρ) for N = ∞.
func WaitFactor(rho, n float64) float64 {
	if rho <= 0 {
		return 0
	}
	if math.IsInf(n, 1) {
		if rho >= 1 {
			return math.Inf(1)
		}
		return rho / (1 - rho)
	}
	if math.Abs(rho-1) < nearOne {
		return (n - 1) / 2
	}
	if rho > 1 {
		// Written in r = 1/ρ to stay finite for large N:
		// ρ/(1-ρ) = -1/(1-r); Nρ^N/(1-ρ^N) = -N/(1-r^N).
		r := 1 / rho
		return -1/(1-r) + n/(1-math.Pow(r, n))
	}
	return rho/(1-rho) - n*math.Pow(rho, n)/(1-math.Pow(rho, n))
}

// Wait returns the mean queueing delay Q of an accepted request for the
// mean service time s (equation 12).
func Wait(rho, n, s float64) float64 { return s * WaitFactor(rho, n) }
