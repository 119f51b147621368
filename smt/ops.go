package smt

import (
	"fmt"
	"math/big"
)

// The operations Eval knows, over evaluated arguments.

type builtin struct {
	min, max int // argument counts; max -1: any
	f        func([]Value) (Value, error)
}

var builtins map[string]builtin

func init() {
	builtins = map[string]builtin{
		"not": {1, 1, func(v []Value) (Value, error) {
			if !v[0].IsBool() {
				return Value{}, errSort("not")
			}
			return Bool(!v[0].True()), nil
		}},
		"=>": {2, -1, implies},
		"xor": {2, -1, func(v []Value) (Value, error) {
			r := false
			for _, x := range v {
				if !x.IsBool() {
					return Value{}, errSort("xor")
				}
				r = r != x.True()
			}
			return Bool(r), nil
		}},
		"=": {2, -1, func(v []Value) (Value, error) {
			for _, x := range v[1:] {
				eq, err := equal(v[0], x)
				if err != nil || !eq {
					return Bool(false), err
				}
			}
			return Bool(true), nil
		}},
		"distinct": {2, -1, func(v []Value) (Value, error) {
			for i := range v {
				for _, y := range v[i+1:] {
					eq, err := equal(v[i], y)
					if err != nil || eq {
						return Bool(false), err
					}
				}
			}
			return Bool(true), nil
		}},
		"select": {2, 2, func(v []Value) (Value, error) { return selectAt(v[0], v[1]) }},
		"store":  {3, 3, func(v []Value) (Value, error) { return storeAt(v[0], v[1], v[2]) }},
		"concat": {2, -1, concat},
		"bvnot":  narrow(1, 1, func(w int, v []uint64) uint64 { return ^v[0] }),
		"bvneg":  narrow(1, 1, func(w int, v []uint64) uint64 { return -v[0] }),
		"bvand":  wideToo(func(a, b *big.Int) *big.Int { return new(big.Int).And(a, b) }, func(a, b uint64) uint64 { return a & b }),
		"bvor":   wideToo(func(a, b *big.Int) *big.Int { return new(big.Int).Or(a, b) }, func(a, b uint64) uint64 { return a | b }),
		"bvxor":  wideToo(func(a, b *big.Int) *big.Int { return new(big.Int).Xor(a, b) }, func(a, b uint64) uint64 { return a ^ b }),
		"bvadd":  fold(func(a, b uint64) uint64 { return a + b }),
		"bvmul":  fold(func(a, b uint64) uint64 { return a * b }),
		"bvsub":  fold(func(a, b uint64) uint64 { return a - b }),
		"bvudiv": narrow(2, 2, func(w int, v []uint64) uint64 { return udiv(w, v[0], v[1]) }),
		"bvurem": narrow(2, 2, func(w int, v []uint64) uint64 { return urem(v[0], v[1]) }),
		"bvsdiv": narrow(2, 2, sdiv),
		"bvsrem": narrow(2, 2, srem),
		"bvsmod": narrow(2, 2, smod),
		"bvshl": narrow(2, 2, func(w int, v []uint64) uint64 {
			if v[1] >= uint64(w) {
				return 0
			}
			return v[0] << v[1]
		}),
		"bvlshr": narrow(2, 2, func(w int, v []uint64) uint64 {
			if v[1] >= uint64(w) {
				return 0
			}
			return v[0] >> v[1]
		}),
		"bvashr": narrow(2, 2, func(w int, v []uint64) uint64 {
			s := min(v[1], uint64(w-1))
			return uint64(sext(w, v[0]) >> s)
		}),
		"bvult": compare(func(w int, a, b uint64) bool { return a < b }),
		"bvule": compare(func(w int, a, b uint64) bool { return a <= b }),
		"bvugt": compare(func(w int, a, b uint64) bool { return a > b }),
		"bvuge": compare(func(w int, a, b uint64) bool { return a >= b }),
		"bvslt": compare(func(w int, a, b uint64) bool { return sext(w, a) < sext(w, b) }),
		"bvsle": compare(func(w int, a, b uint64) bool { return sext(w, a) <= sext(w, b) }),
		"bvsgt": compare(func(w int, a, b uint64) bool { return sext(w, a) > sext(w, b) }),
		"bvsge": compare(func(w int, a, b uint64) bool { return sext(w, a) >= sext(w, b) }),
	}
}

func errSort(op string) error { return fmt.Errorf("smt: %s applied to a value of the wrong sort", op) }

func implies(v []Value) (Value, error) {
	// Right-associative: (=> a b c) is (=> a (=> b c)).
	r := v[len(v)-1]
	if !r.IsBool() {
		return Value{}, errSort("=>")
	}
	res := r.True()
	for i := len(v) - 2; i >= 0; i-- {
		if !v[i].IsBool() {
			return Value{}, errSort("=>")
		}
		res = !v[i].True() || res
	}
	return Bool(res), nil
}

// sameBV checks that every argument is a bit-vector of the first's width,
// and reports whether all fit in 64 bits.
func sameBV(op string, v []Value) (narrow bool, err error) {
	narrow = true
	for _, x := range v {
		if x.kind != kindBV || x.w != v[0].w {
			return false, errSort(op)
		}
		narrow = narrow && x.big == nil
	}
	return narrow, nil
}

// narrow lifts an operation on bit-vectors of at most 64 bits, given
// their width and values; the result is truncated to the width.
func narrow(lo, hi int, f func(w int, v []uint64) uint64) builtin {
	return builtin{lo, hi, func(v []Value) (Value, error) {
		ok, err := sameBV("bit-vector operation", v)
		if err != nil {
			return Value{}, err
		}
		if !ok {
			return Value{}, unsupported("arithmetic on %d bits", v[0].w)
		}
		u := make([]uint64, len(v))
		for i, x := range v {
			u[i] = x.u
		}
		return BV(v[0].w, f(v[0].w, u)), nil
	}}
}

// fold lifts a left-associative binary operation to any number of
// arguments.
func fold(f func(a, b uint64) uint64) builtin {
	return narrow(2, -1, func(w int, v []uint64) uint64 {
		r := v[0]
		for _, x := range v[1:] {
			r = f(r, x)
		}
		return r
	})
}

// wideToo is fold for the bitwise operations, which also take wide
// bit-vectors.
func wideToo(big func(a, b *big.Int) *big.Int, small func(a, b uint64) uint64) builtin {
	n := fold(small)
	return builtin{2, -1, func(v []Value) (Value, error) {
		ok, err := sameBV("bit-vector operation", v)
		if err != nil || ok {
			if err != nil {
				return Value{}, err
			}
			return n.f(v)
		}
		r := v[0].toBig()
		for _, x := range v[1:] {
			r = big(r, x.toBig())
		}
		return bvOf(v[0].w, r), nil
	}}
}

func compare(f func(w int, a, b uint64) bool) builtin {
	return builtin{2, 2, func(v []Value) (Value, error) {
		ok, err := sameBV("comparison", v)
		if err != nil {
			return Value{}, err
		}
		if !ok {
			return Value{}, unsupported("comparison of %d bits", v[0].w)
		}
		return Bool(f(v[0].w, v[0].u, v[1].u)), nil
	}}
}

func concat(v []Value) (Value, error) {
	w := 0
	for _, x := range v {
		if x.kind != kindBV {
			return Value{}, errSort("concat")
		}
		w += x.w
	}
	if w <= 64 {
		var r uint64
		for _, x := range v {
			r = r<<x.w | x.u
		}
		return BV(w, r), nil
	}
	r := new(big.Int)
	for _, x := range v {
		r.Lsh(r, uint(x.w))
		r.Or(r, x.toBig())
	}
	return bvOf(w, r), nil
}

// sext reads a bit-vector of w bits as a signed number.
func sext(w int, u uint64) int64 {
	s := 64 - uint(w)
	return int64(u<<s) >> s
}

func signed(v Value) int64 { return sext(v.w, v.u) }

func udiv(w int, a, b uint64) uint64 {
	if b == 0 {
		return maskOf(w)
	}
	return a / b
}

func urem(a, b uint64) uint64 {
	if b == 0 {
		return a
	}
	return a % b
}

// neg is two's complement negation in w bits.
func neg(w int, a uint64) uint64 { return -a & maskOf(w) }

func msb(w int, a uint64) bool { return a>>(w-1)&1 == 1 }

// sdiv, srem and smod are defined, as SMT-LIB defines them, by the
// unsigned operations on the operands' magnitudes.
func sdiv(w int, v []uint64) uint64 {
	s, t := v[0], v[1]
	switch ms, mt := msb(w, s), msb(w, t); {
	case !ms && !mt:
		return udiv(w, s, t)
	case ms && !mt:
		return neg(w, udiv(w, neg(w, s), t))
	case !ms && mt:
		return neg(w, udiv(w, s, neg(w, t)))
	}
	return udiv(w, neg(w, s), neg(w, t))
}

func srem(w int, v []uint64) uint64 {
	s, t := v[0], v[1]
	switch ms, mt := msb(w, s), msb(w, t); {
	case !ms && !mt:
		return urem(s, t)
	case ms && !mt:
		return neg(w, urem(neg(w, s), t))
	case !ms && mt:
		return urem(s, neg(w, t))
	}
	return neg(w, urem(neg(w, s), neg(w, t)))
}

func smod(w int, v []uint64) uint64 {
	s, t := v[0], v[1]
	ms, mt := msb(w, s), msb(w, t)
	as, at := s, t
	if ms {
		as = neg(w, s)
	}
	if mt {
		at = neg(w, t)
	}
	u := urem(as, at)
	switch {
	case u == 0 || !ms && !mt:
		return u
	case ms && !mt:
		return neg(w, u) + t
	case !ms && mt:
		return u + t
	}
	return neg(w, u)
}
