package smt

import (
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"
)

// Value is the value of a term in a model: a Bool, a bit-vector, or an
// array of bit-vectors indexed by bit-vectors, as QF_AUFBV has them.
type Value struct {
	kind valueKind
	w    int      // bit-vector width in bits; of an array, the element's
	u    uint64   // a Bool (0 or 1) or a bit-vector of at most 64 bits
	big  *big.Int // a wider bit-vector
	arr  *array
}

type valueKind uint8

const (
	kindBool valueKind = iota + 1
	kindBV
	kindArray
)

// array is a constant array or a store into another array; arrays are
// never changed, so stores share what they store into.
type array struct {
	base   *array // nil: a constant array of def
	iw     int    // index width
	idx    uint64 // the index stored, with base
	val    Value  // the element stored, or every element of a constant array
	length int    // stores down to the constant array
}

// ErrUnsupported is returned, wrapped, by Eval for a term it does not know
// how to evaluate (an operation outside QF_AUFBV's common core, an array
// compared as a whole, a bit-vector operation over 64 bits other than
// concat, extract, extension and comparison): the solver must evaluate it.
var ErrUnsupported = errors.New("smt: term not supported by the evaluator")

func unsupported(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrUnsupported, fmt.Sprintf(format, a...))
}

// Bool makes a Bool value.
func Bool(b bool) Value {
	if b {
		return Value{kind: kindBool, u: 1}
	}
	return Value{kind: kindBool}
}

// BV makes a bit-vector value of w bits (at most 64) from the low bits of u.
func BV(w int, u uint64) Value { return Value{kind: kindBV, w: w, u: u & maskOf(w)} }

// ConstArray makes an array whose every element is v, indexed by iw bits.
func ConstArray(iw int, v Value) Value {
	return Value{kind: kindArray, w: v.w, arr: &array{iw: iw, val: v}}
}

func maskOf(w int) uint64 {
	if w >= 64 {
		return ^uint64(0)
	}
	return 1<<w - 1
}

// IsBool reports whether v is a Bool; True whether it is the Bool true.
func (v Value) IsBool() bool { return v.kind == kindBool }

// True reports whether v is the Bool true.
func (v Value) True() bool { return v.kind == kindBool && v.u == 1 }

// Uint64 returns a bit-vector of at most 64 bits, and whether v is one.
func (v Value) Uint64() (uint64, bool) { return v.u, v.kind == kindBV && v.big == nil }

// Width is the width of a bit-vector (of an array, its elements').
func (v Value) Width() int { return v.w }

// toBig returns a bit-vector as a big.Int (not to be changed).
func (v Value) toBig() *big.Int {
	if v.big != nil {
		return v.big
	}
	return new(big.Int).SetUint64(v.u)
}

// bvOf makes a bit-vector of w bits from a non-negative big.Int,
// truncated to w bits.
func bvOf(w int, x *big.Int) Value {
	if x.BitLen() > w {
		x = new(big.Int).And(x, new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), uint(w)), big.NewInt(1)))
	}
	if w <= 64 {
		return BV(w, x.Uint64())
	}
	return Value{kind: kindBV, w: w, big: x}
}

// equal compares two values of the same sort; whole arrays are not
// compared.
func equal(a, b Value) (bool, error) {
	if a.kind != b.kind || a.w != b.w {
		return false, fmt.Errorf("smt: comparing values of different sorts")
	}
	switch {
	case a.kind == kindArray:
		return false, unsupported("array equality")
	case a.big != nil || b.big != nil:
		return a.toBig().Cmp(b.toBig()) == 0, nil
	}
	return a.u == b.u, nil
}

// selectAt reads an array's element at index i.
func selectAt(a Value, i Value) (Value, error) {
	if a.kind != kindArray || i.kind != kindBV || i.big != nil || i.w != a.arr.iw {
		return Value{}, unsupported("select of %v at %v", a, i)
	}
	for n := a.arr; ; n = n.base {
		if n.base == nil {
			return n.val, nil
		}
		if n.idx == i.u {
			return n.val, nil
		}
	}
}

// maxStores bounds the chain of stores an array value holds, so that a
// select stays cheap.
const maxStores = 1 << 12

// storeAt returns the array a with element i set to v.
func storeAt(a, i, v Value) (Value, error) {
	if a.kind != kindArray || i.kind != kindBV || i.big != nil || i.w != a.arr.iw || v.kind != kindBV || v.w != a.w || v.big != nil {
		return Value{}, unsupported("store into %v at %v", a, i)
	}
	if a.arr.length >= maxStores {
		return Value{}, unsupported("more than %d stores", maxStores)
	}
	return Value{kind: kindArray, w: a.w, arr: &array{base: a.arr, iw: a.arr.iw, idx: i.u, val: v, length: a.arr.length + 1}}, nil
}

// String writes a value as an SMT-LIB literal (an array as the stores into
// its constant array).
func (v Value) String() string {
	switch v.kind {
	case kindBool:
		return strconv.FormatBool(v.u == 1)
	case kindBV:
		if v.w%4 == 0 {
			s := v.toBig().Text(16)
			return "#x" + strings.Repeat("0", v.w/4-len(s)) + s
		}
		s := v.toBig().Text(2)
		return "#b" + strings.Repeat("0", v.w-len(s)) + s
	case kindArray:
		n := v.arr
		var stores []*array
		for ; n.base != nil; n = n.base {
			stores = append(stores, n)
		}
		s := fmt.Sprintf("((as const (Array (_ BitVec %d) (_ BitVec %d))) %v)", n.iw, v.w, n.val)
		for i := len(stores) - 1; i >= 0; i-- {
			s = fmt.Sprintf("(store %s %v %v)", s, BV(n.iw, stores[i].idx), stores[i].val)
		}
		return s
	}
	return "?"
}

// literal reads a Bool or bit-vector literal: true, false, #x..., #b....
func literal(a string) (Value, bool) {
	switch {
	case a == "true":
		return Bool(true), true
	case a == "false":
		return Bool(false), true
	case len(a) > 2 && a[0] == '#' && (a[1] == 'x' || a[1] == 'b'):
		base, bits := 16, 4
		if a[1] == 'b' {
			base, bits = 2, 1
		}
		digits := a[2:]
		for i := 0; i < len(digits); i++ {
			if d := digits[i]; !(d >= '0' && d <= '9' || base == 16 && (d >= 'a' && d <= 'f' || d >= 'A' && d <= 'F')) || base == 2 && d > '1' {
				return Value{}, false
			}
		}
		w := bits * len(digits)
		if w <= 64 {
			u, err := strconv.ParseUint(digits, base, 64)
			return BV(w, u), err == nil
		}
		x, ok := new(big.Int).SetString(digits, base)
		if !ok {
			return Value{}, false
		}
		return bvOf(w, x), true
	}
	return Value{}, false
}

// Store returns the array a with element i set to v; a is unchanged.
func Store(a, i, v Value) (Value, error) { return storeAt(a, i, v) }

// Equal reports whether two values of one sort are equal (arrays are not
// compared).
func Equal(a, b Value) (bool, error) { return equal(a, b) }

// IsArray reports whether v is an array.
func (v Value) IsArray() bool { return v.kind == kindArray }

// Stores is the length of an array's chain of stores.
func (v Value) Stores() int {
	if v.kind != kindArray {
		return 0
	}
	return v.arr.length
}

// Compact returns array v with one store per index, the latest.
func Compact(v Value) Value {
	if v.kind != kindArray {
		return v
	}
	seen := map[uint64]bool{}
	var stores []*array
	n := v.arr
	for ; n.base != nil; n = n.base {
		if !seen[n.idx] {
			seen[n.idx] = true
			stores = append(stores, n)
		}
	}
	out := &array{iw: n.iw, val: n.val}
	for i := len(stores) - 1; i >= 0; i-- {
		s := stores[i]
		out = &array{base: out, iw: out.iw, idx: s.idx, val: s.val, length: out.length + 1}
	}
	return Value{kind: kindArray, w: v.w, arr: out}
}
