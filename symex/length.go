package symex

import (
	"github.com/cilium/ebpf/asm"

	"github.com/dpperf/dpperf/bpfprog"
)

// Most branches of a packet parser compare the packet's end with a
// constant offset ("data + 34 > data_end"), and most of the sides the
// solver would refute are such bounds checks contradicting an earlier one.
// The executor keeps the interval of packet lengths the path allows and
// decides these comparisons itself: exactly, since the interval is what
// the path's length conditions and the global bounds imply.

// span is the interval [lo, hi] of packet lengths a path allows.
type span struct{ lo, hi int64 }

// lenTest is a Bool of the form "len op k", op one of ==, !=, and the
// signed orderings, to which a comparison of len + d (d a constant) with a
// constant reduces.
type lenTest struct {
	op asm.JumpOp
	k  int64
}

// lenTestOf recognises "x op y" as a length test, given the lengths s the
// path allows so far: unsigned orderings reduce to signed ones when both
// sides are non-negative.
func lenTestOf(op asm.JumpOp, x, y term, s span) *lenTest {
	if x.lin == nil {
		x, y, op = y, x, bpfprog.Mirror(op)
	}
	if x.lin == nil || !y.known || x.w != 64 || op == asm.JSet || bpfprog.Negate(op) == asm.InvalidJumpOp {
		return nil
	}
	const lim = 1 << 62 // no overflow below
	d, k := *x.lin, int64(y.c)
	if d <= -lim || d >= lim || k <= -lim || k >= lim {
		return nil
	}
	switch op {
	case asm.JGT, asm.JGE, asm.JLT, asm.JLE:
		if s.lo+d < 0 || k < 0 {
			return nil
		}
		op = bpfprog.Signed(op)
	}
	return &lenTest{op, k - d}
}

func (t *lenTest) not() *lenTest {
	if t == nil {
		return nil
	}
	return &lenTest{bpfprog.Negate(t.op), t.k}
}

// decide reports the test's value when every length in s gives the same;
// the orderings are monotone, so the interval's ends decide them.
func (t *lenTest) decide(s span) (value, ok bool) {
	switch t.op {
	case asm.JEq, asm.JNE:
		eq := s.lo == t.k && s.hi == t.k
		ne := t.k < s.lo || t.k > s.hi
		if !eq && !ne {
			return false, false
		}
		return eq == (t.op == asm.JEq), true
	}
	a, b := foldCmp(t.op, 64, uint64(s.lo), uint64(t.k)), foldCmp(t.op, 64, uint64(s.hi), uint64(t.k))
	return a, a == b
}

// narrow restricts s to the lengths for which the test holds, when the
// test is undecided on s (see decide).
func (t *lenTest) narrow(s span) span {
	switch t.op {
	case asm.JSGT:
		s.lo = max(s.lo, t.k+1)
	case asm.JSGE:
		s.lo = max(s.lo, t.k)
	case asm.JSLT:
		s.hi = min(s.hi, t.k-1)
	case asm.JSLE:
		s.hi = min(s.hi, t.k)
	case asm.JEq:
		s.lo, s.hi = t.k, t.k
	case asm.JNE:
		if t.k == s.lo {
			s.lo++
		} else if t.k == s.hi {
			s.hi--
		}
	}
	return s
}
