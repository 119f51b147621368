package symex

import (
	"fmt"

	"github.com/cilium/ebpf/asm"
	"github.com/dpperf/dpperf/bpfprog"
)

// Bools: negation, conjunction and comparisons, decided without the
// solver where the operands' values (or the packet lengths the path
// allows) decide them.

func (b builder) not(c term) term {
	if c.known {
		return boolConst(c.c == 0)
	}
	if c.notOf != "" {
		return term{w: 1, s: c.notOf, test: c.test.not(), eqOf: c.eqOf.negated()}
	}
	t := b.def(1, "not", c)
	t.notOf = c.s
	t.test = c.test.not()
	t.eqOf = c.eqOf.negated()
	return t
}

func (b builder) and(cs ...term) term {
	var live []term
	for _, c := range cs {
		if c.known {
			if c.c == 0 {
				return boolConst(false)
			}
			continue
		}
		live = append(live, c)
	}
	switch len(live) {
	case 0:
		return boolConst(true)
	case 1:
		return live[0]
	}
	return b.def(1, "and", live...)
}

func (b builder) eq(x, y term) term {
	x, y = b.resolve(x), b.resolve(y)
	if c, ok := b.decide(asm.JEq, x, y); ok {
		return c
	}
	if x.known && y.known {
		return boolConst(x.c == y.c)
	}
	if x.known {
		x, y = y, x
	}
	// Compare a zero extension through its narrow term, so that what the
	// path learns is about that term (a packet byte, not its copy in a
	// register).
	if y.known && x.wide != nil {
		if y.c > mask(x.wide.w) {
			return boolConst(false)
		}
		x, y = *x.wide, konst(x.wide.w, y.c)
	}
	t := b.def(1, "=", x, y)
	if y.known && x.alt == nil {
		t.eqOf = &eqFact{name: x.s, c: y.c}
	}
	return t
}

// cmp is the Bool of a BPF conditional jump "x op y" on w-bit terms.
func (b builder) cmp(op asm.JumpOp, x, y term) (term, error) {
	w := x.w
	x, y = b.resolve(x), b.resolve(y)
	if c, ok := b.decide(op, x, y); ok {
		return c, nil
	}
	if x.known && y.known {
		return boolConst(foldCmp(op, w, x.c, y.c)), nil
	}
	if b.lens == nil {
		return b.bvCmp(op, w, x, y)
	}
	if t := lenTestOf(op, x, y, *b.lens); t != nil {
		if v, ok := t.decide(*b.lens); ok {
			return boolConst(v), nil
		}
		c, err := b.bvCmp(op, w, x, y)
		c.test = t
		return c, err
	}
	return b.bvCmp(op, w, x, y)
}

// bvCmp writes "x op y" as an SMT Bool, without the decisions cmp
// tries first.
func (b builder) bvCmp(op asm.JumpOp, w uint16, x, y term) (term, error) {
	var f string
	switch op {
	case asm.JEq:
		return b.eq(x, y), nil
	case asm.JNE:
		return b.not(b.eq(x, y)), nil
	case asm.JGT:
		f = "bvugt"
	case asm.JGE:
		f = "bvuge"
	case asm.JLT:
		f = "bvult"
	case asm.JLE:
		f = "bvule"
	case asm.JSGT:
		f = "bvsgt"
	case asm.JSGE:
		f = "bvsge"
	case asm.JSLT:
		f = "bvslt"
	case asm.JSLE:
		f = "bvsle"
	case asm.JSet:
		return b.not(b.eq(b.bvAnd(x, y), konst(w, 0))), nil
	default:
		return term{}, fmt.Errorf("jump operation %v", op)
	}
	return b.def(1, f, x, y), nil
}

// decide compares a choice with a constant: the result is a constant or
// the choice's Bool (or its negation).
func (b builder) decide(op asm.JumpOp, x, y term) (term, bool) {
	flip := false
	if y.alt != nil && x.known {
		x, y = y, x
		flip = true
	}
	if x.alt == nil || !y.known {
		return term{}, false
	}
	f := func(v uint64) bool {
		if flip {
			return foldCmp(op, x.w, y.c, v)
		}
		return foldCmp(op, x.w, v, y.c)
	}
	a, c := f(x.alt.x), f(x.alt.y)
	switch {
	case a == c:
		return boolConst(a), true
	case a:
		return x.alt.c, true
	}
	return b.not(x.alt.c), true
}

func foldCmp(op asm.JumpOp, w uint16, a, c uint64) bool {
	taken, _ := bpfprog.Cmp(op, int(w), a, c)
	return taken
}
