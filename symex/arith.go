package symex

import (
	"fmt"

	"github.com/cilium/ebpf/asm"
	"github.com/dpperf/dpperf/bpfprog"
)

// Bit-vector arithmetic: widening, extraction, concatenation, choice and
// the ALU operations, folded where the values are known.

// zext widens t to w bits with zeros.
func (b builder) zext(t term, w uint16) term {
	t = b.resolve(t)
	if r, ok := b.lift(t, w, func(v uint64) uint64 { return v }); ok && t.w != w {
		return r
	}
	switch {
	case t.w == w:
		return t
	case t.known:
		return konst(w, t.c)
	}
	z := b.def(w, fmt.Sprintf("(_ zero_extend %d)", w-t.w), t)
	if t.wide != nil {
		z.wide = t.wide
	} else if t.w > 1 {
		narrow := t
		z.wide = &narrow
	}
	return z
}

// sextTo widens t to w bits with its sign.
func (b builder) sextTo(t term, w uint16) term {
	t = b.resolve(t)
	if r, ok := b.lift(t, w, func(v uint64) uint64 { return uint64(bpfprog.SignExtend(v, int(t.w))) }); ok && t.w != w {
		return r
	}
	switch {
	case t.w == w:
		return t
	case t.known:
		return konst(w, uint64(bpfprog.SignExtend(t.c, int(t.w))))
	}
	return b.def(w, fmt.Sprintf("(_ sign_extend %d)", w-t.w), t)
}

// extract takes bits hi..lo of t.
func (b builder) extract(t term, hi, lo uint16) term {
	w := hi - lo + 1
	t = b.resolve(t)
	if r, ok := b.lift(t, w, func(v uint64) uint64 { return v >> lo }); ok && !(lo == 0 && w == t.w) {
		return r
	}
	switch {
	case lo == 0 && w == t.w:
		return t
	case t.known:
		return konst(w, t.c>>lo)
	}
	return b.def(w, fmt.Sprintf("(_ extract %d %d)", hi, lo), t)
}

// concat joins terms, most significant first.
func (b builder) concat(parts ...term) term {
	w, known, c := uint16(0), true, uint64(0)
	for _, p := range parts {
		w += p.w
		known = known && p.known
		c = c<<p.w | p.c
	}
	if known && w <= 64 {
		return konst(w, c)
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return b.def(w, "concat", parts...)
}

// ite chooses a or b by the Bool c.
func (b builder) ite(c, x, y term) term {
	c, x, y = b.resolve(c), b.resolve(x), b.resolve(y)
	if x.known && y.known {
		return b.choose(c, x.w, x.c, y.c)
	}
	if c.known {
		if c.c != 0 {
			return x
		}
		return y
	}
	if x.known && y.known && x.c == y.c {
		return x
	}
	return b.def(x.w, "ite", c, x, y)
}

// alu applies a BPF ALU operation to two terms of width w (32 or 64).
// signed selects sdiv/smod for Div/Mod.
func (b builder) alu(op asm.ALUOp, signed bool, x, y term) (term, error) {
	w := x.w
	x, y = b.resolve(x), b.resolve(y)
	if x.alt != nil && (y.known || op == asm.Neg) {
		r, _ := b.lift(x, w, func(v uint64) uint64 { return foldALU(op, signed, w, v, y.c) })
		return r, nil
	}
	if y.alt != nil && x.known && op != asm.Neg {
		r, _ := b.lift(y, w, func(v uint64) uint64 { return foldALU(op, signed, w, x.c, v) })
		return r, nil
	}
	if x.known && (y.known || op == asm.Neg) {
		return konst(w, foldALU(op, signed, w, x.c, y.c)), nil
	}
	sh := func() term { // BPF masks shift amounts to the width
		return b.bvAnd(y, konst(w, uint64(w-1)))
	}
	zero := konst(w, 0)
	switch op {
	case asm.Add:
		if y.known && y.c == 0 {
			return x, nil
		}
		return b.plusLen(b.def(w, "bvadd", x, y), x, y, 1), nil
	case asm.Sub:
		if y.known && y.c == 0 {
			return x, nil
		}
		return b.plusLen(b.def(w, "bvsub", x, y), x, y, -1), nil
	case asm.Mul:
		return b.def(w, "bvmul", x, y), nil
	case asm.Div:
		// BPF: x / 0 = 0 (SMT-LIB gives all ones).
		div := "bvudiv"
		if signed {
			div = "bvsdiv"
		}
		return b.ite(b.eq(y, zero), zero, b.def(w, div, x, y)), nil
	case asm.Mod:
		// BPF and SMT-LIB agree: x % 0 = x; the signed remainder takes the
		// dividend's sign in both.
		if signed {
			return b.def(w, "bvsrem", x, y), nil
		}
		return b.def(w, "bvurem", x, y), nil
	case asm.Or:
		return b.def(w, "bvor", x, y), nil
	case asm.And:
		return b.bvAnd(x, y), nil
	case asm.Xor:
		return b.def(w, "bvxor", x, y), nil
	case asm.LSh:
		return b.def(w, "bvshl", x, sh()), nil
	case asm.RSh:
		return b.def(w, "bvlshr", x, sh()), nil
	case asm.ArSh:
		return b.def(w, "bvashr", x, sh()), nil
	case asm.Neg:
		return b.def(w, "bvneg", x), nil
	case asm.Mov:
		return y, nil
	}
	return term{}, fmt.Errorf("ALU operation %v", op)
}

// plusLen marks r = x ± y as the packet length plus a constant when x or,
// for a sum, y is.
func (b builder) plusLen(r, x, y term, sign int64) term {
	if r.w != 64 {
		return r
	}
	switch {
	case x.lin != nil && y.known:
		d := *x.lin + sign*int64(y.c)
		r.lin = &d
	case sign > 0 && y.lin != nil && x.known:
		d := *y.lin + int64(x.c)
		r.lin = &d
	}
	return r
}

// bvAnd is the bitwise and of two terms of one width.
func (b builder) bvAnd(x, y term) term {
	x, y = b.resolve(x), b.resolve(y)
	if x.alt != nil && y.known {
		r, _ := b.lift(x, x.w, func(v uint64) uint64 { return v & y.c })
		return r
	}
	if x.known && y.known {
		return konst(x.w, x.c&y.c)
	}
	return b.def(x.w, "bvand", x, y)
}

// foldALU computes an operation on constants; signed selects the signed
// division and modulo.
func foldALU(op asm.ALUOp, signed bool, w uint16, a, c uint64) uint64 {
	if signed && op == asm.Div {
		op = asm.SDiv
	} else if signed && op == asm.Mod {
		op = asm.SMod
	}
	r, _ := bpfprog.ALU(op, int(w), a, c)
	return r
}

// bswap reverses the low n bytes of t (n*8 <= t.w) and zero-extends to 64.
func (b builder) bswap(t term, n int) term {
	parts := make([]term, n)
	for i := 0; i < n; i++ {
		parts[i] = b.extract(t, uint16(8*i+7), uint16(8*i))
	}
	return b.zext(b.concat(parts...), 64)
}
