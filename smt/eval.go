package smt

import (
	"fmt"
	"math/big"
	"strconv"
)

// Evaluating terms in Go: once the values of a model's free symbols are
// known, a term over them is evaluated here without a round trip to the
// solver (which parses, rewrites and answers, about half a millisecond a
// term). The operations are QF_AUFBV's as the symbolic executor writes
// them and as z3 prints model values; anything else is ErrUnsupported and
// left to the solver.

// Env gives the values of the symbols a term names that no let binds: a
// constant's value, and an uninterpreted function's value at arguments.
type Env interface {
	Symbol(name string) (Value, error)
	Apply(name string, args []Value) (Value, error)
}

// Eval evaluates a term in env.
func Eval(e *Expr, env Env) (Value, error) { return evalIn(e, env, nil) }

// binding is a let's name bound to its value, innermost first.
type binding struct {
	name string
	v    Value
	next *binding
}

func evalIn(e *Expr, env Env, b *binding) (Value, error) {
	if e.lit != nil {
		return *e.lit, nil
	}
	if e.List == nil {
		if v, ok := literal(e.Atom); ok {
			return v, nil
		}
		for ; b != nil; b = b.next {
			if b.name == e.Atom {
				return b.v, nil
			}
		}
		return env.Symbol(e.Atom)
	}
	if len(e.List) == 0 {
		return Value{}, fmt.Errorf("smt: empty application")
	}
	head, args := e.List[0], e.List[1:]
	if head.List != nil {
		return evalIndexed(head, args, env, b)
	}
	switch head.Atom {
	case "_": // (_ bvN W)
		return bvLiteral(e)
	case "let":
		return evalLet(args, env, b)
	case "ite":
		if len(args) != 3 {
			return Value{}, arity(e)
		}
		c, err := evalIn(args[0], env, b)
		if err != nil {
			return Value{}, err
		}
		if !c.IsBool() {
			return Value{}, fmt.Errorf("smt: ite on a non-Bool")
		}
		if c.True() {
			return evalIn(args[1], env, b)
		}
		return evalIn(args[2], env, b)
	case "and", "or":
		// Short-circuit: the value does not depend on the rest.
		stop := head.Atom == "or"
		for _, a := range args {
			v, err := evalIn(a, env, b)
			if err != nil {
				return Value{}, err
			}
			if !v.IsBool() {
				return Value{}, fmt.Errorf("smt: %s of a non-Bool", head.Atom)
			}
			if v.True() == stop {
				return Bool(stop), nil
			}
		}
		return Bool(!stop), nil
	}
	vals := make([]Value, len(args))
	for i, a := range args {
		v, err := evalIn(a, env, b)
		if err != nil {
			return Value{}, err
		}
		vals[i] = v
	}
	op, ok := builtin{}, e.op != nil
	if ok {
		op = *e.op
	} else {
		op, ok = builtins[head.Atom]
	}
	if ok {
		if len(vals) < op.min || op.max >= 0 && len(vals) > op.max {
			return Value{}, arity(e)
		}
		return op.f(vals)
	}
	return env.Apply(head.Atom, vals)
}

func arity(e *Expr) error {
	return fmt.Errorf("smt: wrong number of arguments in %s", clip(e.String()))
}

// evalLet evaluates (let ((name term)...) body): the terms in the outer
// scope, the body with every name bound.
func evalLet(args []*Expr, env Env, b *binding) (Value, error) {
	if len(args) != 2 || args[0].List == nil {
		return Value{}, fmt.Errorf("smt: malformed let")
	}
	inner := b
	for _, p := range args[0].List {
		if len(p.List) != 2 || p.List[0].List != nil {
			return Value{}, fmt.Errorf("smt: malformed let binding")
		}
		v, err := evalIn(p.List[1], env, b)
		if err != nil {
			return Value{}, err
		}
		inner = &binding{name: p.List[0].Atom, v: v, next: inner}
	}
	return evalIn(args[1], env, inner)
}

// bvLiteral reads (_ bvN W).
func bvLiteral(e *Expr) (Value, error) {
	if len(e.List) != 3 || e.List[1].List != nil || e.List[2].List != nil || len(e.List[1].Atom) < 3 || e.List[1].Atom[:2] != "bv" {
		return Value{}, unsupported("%s", clip(e.String()))
	}
	w, err := strconv.Atoi(e.List[2].Atom)
	if err != nil || w <= 0 || w > 1<<16 {
		return Value{}, fmt.Errorf("smt: bad width in %s", clip(e.String()))
	}
	x, ok := new(big.Int).SetString(e.List[1].Atom[2:], 10)
	if !ok || x.Sign() < 0 {
		return Value{}, fmt.Errorf("smt: bad literal %s", clip(e.String()))
	}
	return bvOf(w, x), nil
}

// evalIndexed applies an indexed operation, ((_ extract i j) x) and the
// like, or a constant array, ((as const SORT) v).
func evalIndexed(head *Expr, args []*Expr, env Env, b *binding) (Value, error) {
	h := head.List
	if len(args) != 1 || len(h) < 2 || h[0].List != nil {
		return Value{}, unsupported("%s", clip(head.String()))
	}
	x, err := evalIn(args[0], env, b)
	if err != nil {
		return Value{}, err
	}
	if h[0].Atom == "as" && len(h) == 3 && h[1].Atom == "const" {
		iw, ew, ok := arraySortOf(h[2])
		if !ok || x.kind != kindBV || x.w != ew {
			return Value{}, unsupported("constant array %s", clip(head.String()))
		}
		return ConstArray(iw, x), nil
	}
	if h[0].Atom != "_" || x.kind != kindBV {
		return Value{}, unsupported("%s", clip(head.String()))
	}
	idx := head.idx
	if idx == nil {
		var ok bool
		if idx, ok = indices(h[2:]); !ok {
			return Value{}, fmt.Errorf("smt: bad index in %s", clip(head.String()))
		}
	}
	switch op := h[1].Atom; {
	case op == "extract" && len(idx) == 2:
		hi, lo := idx[0], idx[1]
		if hi < lo || hi >= x.w {
			return Value{}, fmt.Errorf("smt: bad extract %s of %d bits", clip(head.String()), x.w)
		}
		if x.big == nil {
			return BV(hi-lo+1, x.u>>lo), nil
		}
		return bvOf(hi-lo+1, new(big.Int).Rsh(x.big, uint(lo))), nil
	case op == "zero_extend" && len(idx) == 1:
		if x.big == nil && x.w+idx[0] <= 64 {
			return BV(x.w+idx[0], x.u), nil
		}
		return bvOf(x.w+idx[0], x.toBig()), nil
	case op == "sign_extend" && len(idx) == 1:
		w := x.w + idx[0]
		if w > 64 {
			return Value{}, unsupported("sign extension to %d bits", w)
		}
		return BV(w, uint64(signed(x))), nil
	}
	return Value{}, unsupported("%s", clip(head.String()))
}

// indices reads the numerals of an indexed head ((_ extract 7 0) and the
// like), or false where one is not a numeral in range.
func indices(as []*Expr) ([]int, bool) {
	idx := make([]int, len(as))
	for i, a := range as {
		n, err := strconv.Atoi(a.Atom)
		if err != nil || n < 0 || n > 1<<16 {
			return nil, false
		}
		idx[i] = n
	}
	return idx, true
}

// arraySortOf reads (Array (_ BitVec I) (_ BitVec E)).
func arraySortOf(s *Expr) (iw, ew int, ok bool) {
	if len(s.List) != 3 || s.List[0].Atom != "Array" {
		return 0, 0, false
	}
	iw, ok1 := bvSortOf(s.List[1])
	ew, ok2 := bvSortOf(s.List[2])
	return iw, ew, ok1 && ok2 && iw <= 64 && ew <= 64
}

// bvSortOf reads (_ BitVec W).
func bvSortOf(s *Expr) (int, bool) {
	if len(s.List) != 3 || s.List[0].Atom != "_" || s.List[1].Atom != "BitVec" {
		return 0, false
	}
	w, err := strconv.Atoi(s.List[2].Atom)
	return w, err == nil && w > 0
}

// SortZero is a value of a sort as the symbolic executor declares them:
// false, a zero bit-vector, or an array of zeros (ok is false for other
// sorts).
func SortZero(sort string) (Value, bool) {
	if sort == "Bool" {
		return Bool(false), true
	}
	e, err := ParseExpr(sort)
	if err != nil {
		return Value{}, false
	}
	if w, ok := bvSortOf(e); ok {
		return bvOf(w, new(big.Int)), true
	}
	if iw, ew, ok := arraySortOf(e); ok {
		return ConstArray(iw, BV(ew, 0)), true
	}
	return Value{}, false
}
