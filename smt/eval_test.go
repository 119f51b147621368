package smt

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

// mapEnv is an Env of fixed symbol values and one function, f, which adds
// one to its 8-bit argument.
type mapEnv map[string]Value

func (m mapEnv) Symbol(name string) (Value, error) {
	if v, ok := m[name]; ok {
		return v, nil
	}
	return Value{}, fmt.Errorf("no symbol %s", name)
}

func (m mapEnv) Apply(name string, args []Value) (Value, error) {
	if name == "f" && len(args) == 1 {
		return BV(8, args[0].u+1), nil
	}
	return Value{}, fmt.Errorf("no function %s", name)
}

func evalText(t *testing.T, env Env, text string) (Value, error) {
	t.Helper()
	e, err := ParseExpr(text)
	if err != nil {
		t.Fatalf("parse %s: %v", text, err)
	}
	return Eval(e, env)
}

// TestEvalKnownAnswers checks the evaluator on terms whose values SMT-LIB
// fixes, including its corner cases (division by zero, shifts past the
// width, signed remainder and modulus).
func TestEvalKnownAnswers(t *testing.T) {
	pkt := ConstArray(32, BV(8, 0))
	pkt, _ = storeAt(pkt, BV(32, 12), BV(8, 0x08))
	env := mapEnv{"x": BV(8, 0xf0), "len": BV(64, 100), "pkt": pkt, "b": Bool(true)}
	for _, c := range []struct{ term, want string }{
		{"(bvadd x #x20)", "#x10"},
		{"(bvsub #x01 #x02)", "#xff"},
		{"(bvmul x #x02 #x02)", "#xc0"},
		{"(bvudiv x #x00)", "#xff"},
		{"(bvurem x #x00)", "#xf0"},
		{"(bvsdiv #xf9 #x02)", "#xfd"}, // -7 / 2 = -3
		{"(bvsrem #xf9 #x02)", "#xff"}, // -7 rem 2 = -1
		{"(bvsmod #xf9 #x02)", "#x01"}, // -7 mod 2 = 1
		{"(bvsmod #x07 #xfe)", "#xff"}, // 7 mod -2 = -1
		{"(bvsdiv #x07 #x00)", "#xff"},
		{"(bvsdiv #xf9 #x00)", "#x01"},
		{"(bvshl x #x09)", "#x00"},
		{"(bvlshr x #x04)", "#x0f"},
		{"(bvashr x #x04)", "#xff"},
		{"(bvashr x #x20)", "#xff"},
		{"(bvnot x)", "#x0f"},
		{"(bvneg #x01)", "#xff"},
		{"(bvslt x #x00)", "true"},
		{"(bvult x #x00)", "false"},
		{"(bvsge #x7f x)", "true"},
		{"(concat x #x0001)", "#xf00001"},
		{"((_ extract 7 4) x)", "#xf"},
		{"((_ zero_extend 8) x)", "#x00f0"},
		{"((_ sign_extend 8) x)", "#xfff0"},
		{"(_ bv5 3)", "#b101"},
		{"(select pkt #x0000000c)", "#x08"},
		{"(select (store pkt #x0000000c #x86) #x0000000c)", "#x86"},
		{"(select pkt #x0000000d)", "#x00"},
		{"(select ((as const (Array (_ BitVec 32) (_ BitVec 8))) #x07) #x00000001)", "#x07"},
		{"(let ((a (bvadd x #x01)) (x #x00)) (bvadd a x))", "#xf1"},
		{"(ite (= len #x0000000000000064) #x01 #x02)", "#x01"},
		{"(and b (or false (not false)) (=> false false))", "true"},
		{"(=> true true false)", "false"},
		{"(xor b true)", "false"},
		{"(distinct #x01 #x02 #x01)", "false"},
		{"(= (concat #x0000000000000001 #x0000000000000002) (concat #x00000000000000 #x0100000000000000 #x02))", "true"},
		{"(bvand (concat #xffffffffffffffff #xff) #x00000000000000000f)", "#x00000000000000000f"},
		{"((_ extract 71 64) (concat #xab #x0000000000000000))", "#xab"},
		{"(f x)", "#xf1"},
		{"(= |x| x)", "true"},
	} {
		v, err := evalText(t, env, c.term)
		if err != nil {
			t.Errorf("%s: %v", c.term, err)
			continue
		}
		if v.String() != c.want {
			t.Errorf("%s = %s, want %s", c.term, v, c.want)
		}
		// The same term built by hand, with nothing read ahead by the
		// parser: evaluated as it is read, to the same value.
		e, _ := ParseExpr(c.term)
		if v, err := Eval(byHand(e), env); err != nil || v.String() != c.want {
			t.Errorf("%s built by hand = %s (%v), want %s", c.term, v, err, c.want)
		}
	}
	for _, bad := range []string{"(bvmul (concat #xffffffffffffffff #xff) #x000000000000000001)", "(= pkt pkt)", "(lambda ((i (_ BitVec 32))) i)", "((_ rotate_left 1) x)"} {
		if _, err := evalText(t, env, bad); !errors.Is(err, ErrUnsupported) {
			t.Errorf("%s: %v, want ErrUnsupported", bad, err)
		}
	}
	for _, bad := range []string{"(not x)", "(bvadd x len)", "(ite x #x01 #x02)", "(nosuch x)", "y"} {
		if _, err := evalText(t, env, bad); err == nil {
			t.Errorf("%s evaluated", bad)
		}
	}
}

// byHand copies a parsed term without what the parser read ahead.
func byHand(e *Expr) *Expr {
	if e.List == nil {
		return &Expr{Atom: e.Atom}
	}
	c := &Expr{List: make([]*Expr, len(e.List))}
	for i, x := range e.List {
		c.List[i] = byHand(x)
	}
	return c
}

// TestParseValue reads model values as z3 prints them.
func TestParseValue(t *testing.T) {
	v, err := ParseValue(`(let ((a!1 (store ((as const (Array (_ BitVec 32) (_ BitVec 8))) #x00) #x0000000e #x05)))
  (store a!1 #x00000025 #x02))`)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range map[uint64]uint64{0x0e: 5, 0x25: 2, 0: 0} {
		if got, _ := selectAt(v, BV(32, i)); got.u != want {
			t.Errorf("element %#x = %v, want %#x", i, got, want)
		}
	}
	if _, err := ParseValue("(_ as-array k!0)"); !errors.Is(err, ErrUnsupported) {
		t.Errorf("as-array: %v, want ErrUnsupported", err)
	}
}

// randTerm writes a random bit-vector term of width w over x (8 bits), y
// (16 bits) and the array p.
func randTerm(r *rand.Rand, w, depth int) string {
	if depth == 0 || r.Intn(4) == 0 {
		switch {
		case w == 8 && r.Intn(3) == 0:
			return "x"
		case w == 16 && r.Intn(3) == 0:
			return "y"
		case w == 8 && r.Intn(3) == 0:
			return fmt.Sprintf("(select p #x%04x)", r.Intn(4))
		}
		return BV(w, r.Uint64()&[]uint64{0, 1, 0xff, ^uint64(0)}[r.Intn(4)]|uint64(r.Intn(3))).String()
	}
	ops := []string{"bvadd", "bvsub", "bvmul", "bvudiv", "bvurem", "bvsdiv", "bvsrem", "bvsmod", "bvshl", "bvlshr", "bvashr", "bvand", "bvor", "bvxor"}
	switch k := r.Intn(8); {
	case k == 0:
		return fmt.Sprintf("(bvnot %s)", randTerm(r, w, depth-1))
	case k == 1:
		return fmt.Sprintf("(ite %s %s %s)", randBool(r, depth-1), randTerm(r, w, depth-1), randTerm(r, w, depth-1))
	case k == 2 && w > 8:
		return fmt.Sprintf("((_ sign_extend %d) %s)", w-8, randTerm(r, 8, depth-1))
	case k == 3 && w == 8:
		return fmt.Sprintf("((_ extract 11 4) %s)", randTerm(r, 16, depth-1))
	case k == 4 && w == 16:
		return fmt.Sprintf("(concat %s %s)", randTerm(r, 8, depth-1), randTerm(r, 8, depth-1))
	}
	return fmt.Sprintf("(%s %s %s)", ops[r.Intn(len(ops))], randTerm(r, w, depth-1), randTerm(r, w, depth-1))
}

func randBool(r *rand.Rand, depth int) string {
	cmps := []string{"bvult", "bvule", "bvugt", "bvuge", "bvslt", "bvsle", "bvsgt", "bvsge", "="}
	w := []int{8, 16}[r.Intn(2)]
	if depth > 0 && r.Intn(3) == 0 {
		return fmt.Sprintf("(%s %s %s)", []string{"and", "or", "xor", "=>"}[r.Intn(4)], randBool(r, depth-1), randBool(r, depth-1))
	}
	return fmt.Sprintf("(%s %s %s)", cmps[r.Intn(len(cmps))], randTerm(r, w, depth), randTerm(r, w, depth))
}

// TestEvalAgreesWithZ3 evaluates random terms in a model both in Go and by
// z3, which must agree.
func TestEvalAgreesWithZ3(t *testing.T) {
	s := start(t, Config{})
	for _, d := range []string{"(declare-const x (_ BitVec 8))", "(declare-const y (_ BitVec 16))", "(declare-const p (Array (_ BitVec 16) (_ BitVec 8)))"} {
		if err := s.Declare(d); err != nil {
			t.Fatal(err)
		}
	}
	r := rand.New(rand.NewSource(1))
	for round := 0; round < 8; round++ {
		s.Push()
		s.Assert(fmt.Sprintf("(= x #x%02x)", r.Intn(256)))
		s.Assert(fmt.Sprintf("(= (select p #x0001) #x%02x)", r.Intn(256)))
		s.Assert(fmt.Sprintf("(bvslt y #x%04x)", r.Intn(1<<16)))
		if res, err := s.Check(context.Background()); err != nil || res != Sat {
			t.Fatalf("check: %v %v", res, err)
		}
		m := s.Model()
		for i := 0; i < 60; i++ {
			term := randTerm(r, []int{8, 16}[i%2], 4)
			if i%3 == 0 {
				term = randBool(r, 3)
			}
			e, err := ParseExpr(term)
			if err != nil {
				t.Fatal(err)
			}
			v, err := Eval(e, m)
			if err != nil {
				t.Fatalf("%s: %v", term, err)
			}
			want, err := s.Eval(term)
			if err != nil {
				t.Fatal(err)
			}
			if v.String() != strings.TrimSpace(want) {
				t.Errorf("%s = %s in Go, %s by z3", term, v, want)
			}
		}
		s.Pop()
	}
}

// FuzzEval parses and evaluates arbitrary text: no panic, and a term
// that parses prints back to text that parses to the same.
func FuzzEval(f *testing.F) {
	for _, s := range []string{"(bvadd x #x01)", "(let ((a x)) (concat a a))", "((_ extract 3 0) x)", "(select (store ((as const (Array (_ BitVec 32) (_ BitVec 8))) #x00) #x00000001 #x02) #x00000001)", "(_ bv3 2)", "|a b|", "(ite true x x) ; c"} {
		f.Add(s)
	}
	env := mapEnv{"x": BV(8, 3)}
	f.Fuzz(func(t *testing.T, text string) {
		e, err := ParseExpr(text)
		if err != nil {
			return
		}
		back, err := ParseExpr(e.String())
		if err != nil || back.String() != e.String() {
			if !strings.ContainsAny(text, "|\"") { // quoted symbols lose their quotes
				t.Fatalf("%q printed as %q: %v", text, e.String(), err)
			}
		}
		Eval(e, env)
	})
}
