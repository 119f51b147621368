package queue

import "math"

// Stats returns WaitFactor(ρ, N) and Block(ρ, N) together with one power
// evaluation; the evaluator calls it for every station.
func Stats(rho, n float64) (wait, block float64) {
	switch {
	case rho <= 0:
		return 0, 0
	case math.IsInf(n, 1):
		if rho >= 1 {
			return math.Inf(1), 0
		}
		return rho / (1 - rho), 0
	case math.Abs(rho-1) < nearOne:
		return (n - 1) / 2, 1 / (n + 1)
	case rho > 1:
		r := 1 / rho
		x := pow(r, n)
		return -1/(1-r) + n/(1-x), (1 - r) / (1 - x*r)
	}
	x := pow(rho, n)
	return rho/(1-rho) - n*x/(1-x), x * (1 - rho) / (1 - x*rho)
}

// pow is math.Pow with a fast path for whole exponents by squaring.
func pow(x, n float64) float64 {
	if n != math.Trunc(n) || n > 1<<30 {
		return math.Pow(x, n)
	}
	k := int64(n)
	r := 1.0
	for k > 0 {
		if k&1 == 1 {
			r *= x
		}
		x *= x
		k >>= 1
	}
	return r
}
