package symex

import (
	"testing"

	"github.com/cilium/ebpf/asm"
)

func TestLenTest(t *testing.T) {
	s := span{14, 1500}
	lenPlus := func(d int64) term { return term{w: 64, s: "t", lin: &d} }
	cases := []struct {
		name         string
		op           asm.JumpOp
		x, y         term
		value, known bool
		after        span // the interval once the test holds
	}{
		// data + 14 > data_end: 14 > len.
		{"runt", asm.JSGT, konst(64, 14), lenPlus(0), false, true, s},
		// data + 34 > data_end: undecided; holding, len <= 33.
		{"short", asm.JSGT, konst(64, 34), lenPlus(0), false, false, span{14, 33}},
		// len - 14 >= 20 (signed): len >= 34.
		{"offset", asm.JSGE, lenPlus(-14), konst(64, 20), false, false, span{34, 1500}},
		// len - 14 s>= -20: always.
		{"negative", asm.JSGE, lenPlus(-14), konst(64, uint64(0xffffffffffffffec)), true, true, s},
		// unsigned len + 2 > 1600: never.
		{"unsigned", asm.JGT, lenPlus(2), konst(64, 1600), false, true, s},
		{"equal", asm.JEq, lenPlus(0), konst(64, 60), false, false, span{60, 60}},
		{"equal outside", asm.JEq, lenPlus(0), konst(64, 2000), false, true, s},
		{"not the low end", asm.JNE, lenPlus(0), konst(64, 14), false, false, span{15, 1500}},
	}
	for _, c := range cases {
		lt := lenTestOf(c.op, c.x, c.y, s)
		if lt == nil {
			t.Fatalf("%s: not recognised", c.name)
		}
		v, ok := lt.decide(s)
		if ok != c.known || ok && v != c.value {
			t.Errorf("%s: decide = %v, %v; want %v, %v", c.name, v, ok, c.value, c.known)
		}
		if !ok {
			if got := lt.narrow(s); got != c.after {
				t.Errorf("%s: narrow = %v, want %v", c.name, got, c.after)
			}
			// The negation holds on the rest.
			if v, ok := lt.not().decide(c.after); !ok || v {
				t.Errorf("%s: negation on the narrowed interval = %v, %v", c.name, v, ok)
			}
		}
	}
	// Unsigned tests of a length minus a constant may wrap: not reduced.
	if lenTestOf(asm.JGT, lenPlus(-100), konst(64, 5), s) != nil {
		t.Error("wrapping unsigned test reduced")
	}
}
