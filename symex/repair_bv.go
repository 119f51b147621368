package symex

import "github.com/dpperf/dpperf/smt"

// Repair below bit-vectors: the wanted value is passed down through
// extensions, extracts, concatenations and operations with a known
// operand to the packet's bytes, a map's values and free constants.

// makeBV makes bit-vector x evaluate to want.
func (e *witnessEnv) makeBV(x *smt.Expr, want smt.Value, depth int) bool {
	cur, ok := e.eval(x)
	if !ok {
		return false
	}
	if eq, err := smt.Equal(cur, want); err != nil {
		return false
	} else if eq {
		return true
	}
	_, ok1 := cur.Uint64()
	t, ok2 := want.Uint64()
	if !ok1 || !ok2 || depth > maxRepairDepth {
		return false
	}
	w := cur.Width()
	if x.List == nil {
		if def := e.definition(x.Atom); def != nil {
			return e.makeBV(def, want, depth+1)
		}
		if x.Atom[0] == '#' {
			return false
		}
		e.edit(x.Atom, want)
		return true
	}
	if len(x.List) == 0 {
		return false
	}
	head, args := x.List[0], x.List[1:]
	if head.List != nil { // (_ extract hi lo), (_ zero_extend k), (_ sign_extend k)
		return e.makeIndexed(head, args, t, w, depth)
	}
	switch op := head.Atom; op {
	case "concat":
		return e.makeConcat(args, t, depth)
	case "select":
		if len(args) != 2 {
			return false
		}
		i, ok := e.eval(args[1])
		return ok && e.makeElem(args[0], i, want, depth+1)
	case "ite":
		taken, ok := e.iteTaken(args)
		return ok && e.makeBV(taken, want, depth+1)
	case "bvand", "bvor", "bvxor", "bvadd", "bvsub", "bvshl", "bvlshr", "bvnot", "bvneg":
		return e.makeArith(op, args, t, w, depth)
	}
	return contentsFunc(head.Atom) && e.editApp(head.Atom, args, want)
}

// makeIndexed passes wanted bits through an extract or an extension.
func (e *witnessEnv) makeIndexed(head *smt.Expr, args []*smt.Expr, t uint64, w, depth int) bool {
	h := head.List
	if len(args) != 1 || len(h) < 3 || h[0].Atom != "_" {
		return false
	}
	inner, ok := e.eval(args[0])
	if !ok {
		return false
	}
	in, ok := inner.Uint64()
	iw := inner.Width()
	if !ok {
		return false
	}
	n := func(i int) int {
		k := 0
		for _, d := range h[i].Atom {
			if d < '0' || d > '9' {
				return -1
			}
			k = 10*k + int(d-'0')
		}
		return k
	}
	switch h[1].Atom {
	case "extract":
		hi, lo := n(2), n(3)
		if len(h) != 4 || lo < 0 || hi < lo || hi >= iw {
			return false
		}
		field := (uint64(1)<<(hi-lo+1) - 1) << lo
		if hi-lo+1 == 64 {
			field = ^uint64(0)
		}
		return e.makeBV(args[0], smt.BV(iw, in&^field|t<<lo&field), depth+1)
	case "zero_extend":
		if t>>iw != 0 && iw < 64 {
			return false
		}
		return e.makeBV(args[0], smt.BV(iw, t), depth+1)
	case "sign_extend":
		low := smt.BV(iw, t)
		lu, _ := low.Uint64()
		ext := uint64(int64(lu<<(64-iw)) >> (64 - iw))
		if w < 64 {
			ext &= uint64(1)<<w - 1
		}
		if ext != t {
			return false
		}
		return e.makeBV(args[0], low, depth+1)
	}
	return false
}

// makeConcat splits the wanted bits among the parts, last part lowest.
func (e *witnessEnv) makeConcat(args []*smt.Expr, t uint64, depth int) bool {
	shift := 0
	for i := len(args) - 1; i >= 0; i-- {
		v, ok := e.eval(args[i])
		if !ok {
			return false
		}
		pw := v.Width()
		part := t >> shift
		if pw < 64 {
			part &= uint64(1)<<pw - 1
		}
		if !e.makeBV(args[i], smt.BV(pw, part), depth+1) {
			return false
		}
		shift += pw
		if shift >= 64 && i > 0 {
			return false
		}
	}
	return true
}

// makeArith undoes an operation with one operand known: the other is
// made the value that gives t.
func (e *witnessEnv) makeArith(op string, args []*smt.Expr, t uint64, w, depth int) bool {
	mask := ^uint64(0)
	if w < 64 {
		mask = uint64(1)<<w - 1
	}
	if op == "bvnot" || op == "bvneg" {
		if len(args) != 1 {
			return false
		}
		x := ^t
		if op == "bvneg" {
			x = -t
		}
		return e.makeBV(args[0], smt.BV(w, x&mask), depth+1)
	}
	if len(args) != 2 {
		return false
	}
	if op == "bvor" {
		// Parts with bits of their own (a byte swap's halves) take
		// their bits of t each.
		ma, mb := e.possibleBits(args[0], 0), e.possibleBits(args[1], 0)
		if ma&mb == 0 && t&^(ma|mb) == 0 {
			return e.makeBV(args[0], smt.BV(w, t&ma), depth+1) && e.makeBV(args[1], smt.BV(w, t&mb), depth+1)
		}
	}
	for xi := range 2 {
		x, y := args[xi], args[1-xi]
		ok := e.try(func() bool {
			yv, ok := e.eval(y)
			if !ok {
				return false
			}
			k, ok := yv.Uint64()
			if !ok {
				return false
			}
			xv, ok := e.eval(x)
			if !ok {
				return false
			}
			cur, _ := xv.Uint64()
			var want uint64
			switch {
			case op == "bvand":
				if t&^k != 0 {
					return false
				}
				want = cur&^k | t
			case op == "bvor":
				if t&k != k {
					return false
				}
				want = t&^k | cur&k
			case op == "bvxor":
				want = t ^ k
			case op == "bvadd":
				want = t - k
			case op == "bvsub" && xi == 0:
				want = t + k
			case op == "bvsub":
				want = k - t
			case (op == "bvshl" || op == "bvlshr") && xi == 0 && k < uint64(w):
				s := uint(k)
				if op == "bvshl" {
					if t&(uint64(1)<<s-1) != 0 {
						return false
					}
					want = t>>s | cur&^(mask>>s)
				} else {
					if s > 0 && t>>(uint(w)-s) != 0 {
						return false
					}
					want = t<<s | cur&(uint64(1)<<s-1)
				}
			default:
				return false
			}
			return e.makeBV(x, smt.BV(w, want&mask), depth+1)
		})
		if ok {
			return true
		}
	}
	return false
}

// makeElem makes element i of array term arr evaluate to want: the
// packet's or a declared array's byte, or a map value's, is edited; a
// store of that index passes it on to the stored value.
func (e *witnessEnv) makeElem(arr *smt.Expr, i, want smt.Value, depth int) bool {
	if depth > maxRepairDepth {
		return false
	}
	if arr.List == nil {
		if def := e.definition(arr.Atom); def != nil {
			return e.makeElem(def, i, want, depth+1)
		}
		v, ok := e.storeInto(arr, i, want)
		if ok {
			e.edit(arr.Atom, v)
		}
		return ok
	}
	if len(arr.List) == 0 || arr.List[0].List != nil {
		return false
	}
	head, args := arr.List[0].Atom, arr.List[1:]
	switch head {
	case "store":
		if len(args) != 3 {
			return false
		}
		j, ok := e.eval(args[1])
		if !ok {
			return false
		}
		if same, err := smt.Equal(i, j); err != nil {
			return false
		} else if same {
			return e.makeBV(args[2], want, depth+1)
		}
		return e.makeElem(args[0], i, want, depth+1)
	case "ite":
		taken, ok := e.iteTaken(args)
		return ok && e.makeElem(taken, i, want, depth+1)
	}
	if !contentsFunc(head) {
		return false
	}
	v, ok := e.storeInto(arr, i, want)
	return ok && e.editApp(head, args, v)
}

// storeInto returns the witness's value of array term arr with element i
// set to want.
func (e *witnessEnv) storeInto(arr *smt.Expr, i, want smt.Value) (smt.Value, bool) {
	cur, ok := e.eval(arr)
	if !ok || !cur.IsArray() {
		return smt.Value{}, false
	}
	v, err := smt.Store(cur, i, want)
	return v, err == nil
}

// lowBit is the lowest set bit of m, or 1 for none.
func lowBit(m uint64) uint64 {
	if m == 0 {
		return 1
	}
	return m & -m
}

// possibleBits over-approximates the bits bit-vector x can have set:
// masks, shifts by constants, extensions and constants narrow it.
func (e *witnessEnv) possibleBits(x *smt.Expr, depth int) uint64 {
	v, ok := e.eval(x)
	if !ok {
		return ^uint64(0)
	}
	w := v.Width()
	all := ^uint64(0)
	if w < 64 {
		all = uint64(1)<<w - 1
	}
	if depth > 8 {
		return all
	}
	if x.List == nil {
		if x.Atom[0] == '#' {
			u, _ := v.Uint64()
			return u
		}
		if def := e.definition(x.Atom); def != nil {
			return e.possibleBits(def, depth+1)
		}
		return all
	}
	if len(x.List) == 0 {
		return all
	}
	head, args := x.List[0], x.List[1:]
	if head.List != nil {
		h := head.List
		if len(h) == 3 && h[1].Atom == "zero_extend" && len(args) == 1 {
			return e.possibleBits(args[0], depth+1)
		}
		return all
	}
	constant := func(a *smt.Expr) (uint64, bool) {
		if a.List != nil || a.Atom[0] != '#' {
			return 0, false
		}
		v, ok := e.eval(a)
		if !ok {
			return 0, false
		}
		return v.Uint64()
	}
	switch head.Atom {
	case "bvand":
		m := all
		for _, a := range args {
			m &= e.possibleBits(a, depth+1)
		}
		return m
	case "bvor":
		m := uint64(0)
		for _, a := range args {
			m |= e.possibleBits(a, depth+1)
		}
		return m & all
	case "bvshl", "bvlshr":
		k, ok := constant(args[1])
		if len(args) != 2 || !ok || k >= 64 {
			return all
		}
		if head.Atom == "bvshl" {
			return e.possibleBits(args[0], depth+1) << k & all
		}
		return e.possibleBits(args[0], depth+1) >> k
	}
	return all
}

// iteTaken returns the branch of (ite c a b) that c takes in the witness.
func (e *witnessEnv) iteTaken(args []*smt.Expr) (*smt.Expr, bool) {
	if len(args) != 3 {
		return nil, false
	}
	cond, ok := e.eval(args[0])
	if !ok || !cond.IsBool() {
		return nil, false
	}
	if cond.True() {
		return args[1], true
	}
	return args[2], true
}
