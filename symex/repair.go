package symex

import (
	"strings"

	"github.com/dpperf/dpperf/smt"
)

// Repair of a witness: an assertion that does not hold in it is made to
// hold by editing free terms, walking from the assertion down to them and
// inverting what lies between: a comparison with a value picks the value
// at its boundary, equalities, extensions, extracts and concatenations
// pass the wanted bits down, masks, shifts, additions and exclusive ors by
// a known operand are undone, a select edits the element of the packet or
// of a map's value it reads, a map's membership is flipped. Nothing is
// searched: an assertion beyond these gives up, and the solver decides.
// Edits may break other assertions; byWitness evaluates the whole prefix
// again and repairs a few rounds.

// maxRepairDepth bounds the terms a repair walks through.
const maxRepairDepth = 64

// repair edits e's free terms so that assertion a holds, and reports
// whether it found edits to try. On false, e's edits are as before.
func (e *witnessEnv) repair(a *smt.Expr) bool {
	return e.try(func() bool { return e.makeBool(a, true, 0) })
}

func (e *witnessEnv) eval(x *smt.Expr) (smt.Value, bool) {
	v, err := smt.Eval(x, e)
	return v, err == nil
}

// definition returns the definition of a defined name, or nil for a free
// one.
func (e *witnessEnv) definition(name string) *smt.Expr {
	_, d := e.def(name)
	if d == nil || d.expr == "" {
		return nil
	}
	x, err := d.expression()
	if err != nil {
		return nil
	}
	return x
}

// try runs f and undoes its edits when it fails.
func (e *witnessEnv) try(f func() bool) bool {
	mark := len(e.undo)
	if f() {
		return true
	}
	e.rollback(mark)
	return false
}

// makeBool makes x evaluate to want.
func (e *witnessEnv) makeBool(x *smt.Expr, want bool, depth int) bool {
	cur, ok := e.eval(x)
	if !ok || !cur.IsBool() {
		return false
	}
	if cur.True() == want {
		return true
	}
	if depth > maxRepairDepth {
		return false
	}
	if x.List == nil {
		if def := e.definition(x.Atom); def != nil {
			return e.makeBool(def, want, depth+1)
		}
		if x.Atom == "true" || x.Atom == "false" {
			return false
		}
		e.edit(x.Atom, smt.Bool(want))
		return true
	}
	if len(x.List) == 0 || x.List[0].List != nil {
		return false
	}
	op, args := x.List[0].Atom, x.List[1:]
	switch op {
	case "not":
		return len(args) == 1 && e.makeBool(args[0], !want, depth+1)
	case "and", "or":
		if (op == "and") == want { // every argument to want
			for _, a := range args {
				if !e.makeBool(a, want, depth+1) {
					return false
				}
			}
			return true
		}
		for _, a := range args { // one argument to want
			if e.try(func() bool { return e.makeBool(a, want, depth+1) }) {
				return true
			}
		}
		return false
	case "=", "distinct":
		if len(args) != 2 {
			return false
		}
		return e.makeEqual(args[0], args[1], want == (op == "="), depth)
	case "bvult", "bvule", "bvugt", "bvuge", "bvslt", "bvsle", "bvsgt", "bvsge":
		if len(args) != 2 {
			return false
		}
		return e.makeCompare(op, args[0], args[1], want, depth)
	}
	// A map's membership at a key.
	return contentsFunc(op) && e.editApp(op, args, smt.Bool(want))
}

// editApp sets a map's contents function at its arguments' values.
func (e *witnessEnv) editApp(name string, args []*smt.Expr, v smt.Value) bool {
	term := "(" + name
	for _, a := range args {
		av, ok := e.eval(a)
		if !ok || av.IsArray() {
			return false
		}
		term += " " + av.String()
	}
	e.edit(term+")", v)
	return true
}

// makeEqual makes a = b (or a != b) by changing one side.
func (e *witnessEnv) makeEqual(a, b *smt.Expr, equal bool, depth int) bool {
	for _, side := range [2][2]*smt.Expr{{a, b}, {b, a}} {
		x, y := side[0], side[1]
		ok := e.try(func() bool {
			yv, ok := e.eval(y)
			if !ok {
				return false
			}
			if yv.IsBool() {
				return e.makeBool(x, yv.True() == equal, depth+1)
			}
			u, ok := yv.Uint64()
			if !ok {
				return false
			}
			if equal {
				return e.makeBV(x, yv, depth+1)
			}
			// Any other value: one bit off, a bit x can have.
			for _, t := range []uint64{u ^ lowBit(e.possibleBits(x, 0)), u ^ 1} {
				if t != u && e.try(func() bool { return e.makeBV(x, smt.BV(yv.Width(), t), depth+1) }) {
					return true
				}
			}
			return false
		})
		if ok {
			return true
		}
	}
	return false
}

// makeCompare makes (op a b) evaluate to want by moving one side to the
// boundary.
func (e *witnessEnv) makeCompare(op string, a, b *smt.Expr, want bool, depth int) bool {
	if !want { // not (a < b) is a >= b, and so on
		op = map[string]string{"bvult": "bvuge", "bvule": "bvugt", "bvugt": "bvule", "bvuge": "bvult",
			"bvslt": "bvsge", "bvsle": "bvsgt", "bvsgt": "bvsle", "bvsge": "bvslt"}[op]
	}
	signed := op[2] == 's'
	// a op b, with a moved: a < b wants a = b-1, a <= b wants a = b, ...
	// With b moved, the mirror: a < b wants b = a+1.
	type move struct {
		x, y  *smt.Expr
		delta int64 // x = y + delta
	}
	var moves [2]move
	switch op[3:] {
	case "lt":
		moves = [2]move{{a, b, -1}, {b, a, 1}}
	case "le":
		moves = [2]move{{a, b, 0}, {b, a, 0}}
	case "gt":
		moves = [2]move{{a, b, 1}, {b, a, -1}}
	case "ge":
		moves = [2]move{{a, b, 0}, {b, a, 0}}
	}
	// The comparison is evaluated after each move: a side that the other
	// is computed from (x > x + k, an overflow check) moves both.
	cmp := &smt.Expr{List: []*smt.Expr{{Atom: op}, a, b}}
	holds := func() bool {
		v, ok := e.eval(cmp)
		return ok && v.True()
	}
	for _, m := range moves {
		ok := e.try(func() bool {
			yv, ok := e.eval(m.y)
			if !ok {
				return false
			}
			u, ok := yv.Uint64()
			if !ok {
				return false
			}
			w := yv.Width()
			t := u + uint64(m.delta)
			if wrapped(w, u, t, m.delta, signed) {
				return false
			}
			return e.makeBV(m.x, smt.BV(w, t), depth+1) && holds()
		})
		if ok {
			return true
		}
	}
	// Then the extremes, one side at a time.
	for _, x := range [2]*smt.Expr{a, b} {
		xv, ok := e.eval(x)
		if !ok {
			return false
		}
		w := xv.Width()
		if w > 64 {
			return false
		}
		all := ^uint64(0) >> (64 - w)
		for _, t := range [4]uint64{all, 0, all >> 1, all>>1 + 1} {
			if e.try(func() bool { return e.makeBV(x, smt.BV(w, t), depth+1) && holds() }) {
				return true
			}
		}
	}
	return false
}

// wrapped reports whether u+delta left the range of w-bit numbers
// (signed or not).
func wrapped(w int, u, t uint64, delta int64, signed bool) bool {
	mask := uint64(1)<<w - 1
	if w == 64 {
		mask = ^uint64(0)
	}
	if delta == 0 {
		return false
	}
	if signed {
		lo, hi := uint64(1)<<(w-1), uint64(1)<<(w-1)-1 // the least, the greatest
		return delta > 0 && u&mask == hi || delta < 0 && u&mask == lo
	}
	return delta > 0 && u&mask == mask || delta < 0 && u&mask == 0 || t&^mask != 0 && delta > 0
}

// contentsFunc reports whether name is a map's contents function (see
// contentNames): membership or value at a key.
func contentsFunc(name string) bool {
	rest, ok := strings.CutPrefix(name, "has")
	if !ok {
		rest, ok = strings.CutPrefix(name, "val")
	}
	a, b, found := strings.Cut(rest, "_")
	return ok && found && isDigits(a) && isDigits(b)
}

func isDigits(s string) bool {
	for _, d := range []byte(s) {
		if d < '0' || d > '9' {
			return false
		}
	}
	return s != ""
}
