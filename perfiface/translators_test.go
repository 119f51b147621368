package perfiface

import "testing"

// TestPathTranslatorForgetsLeftLevels: a sibling's levels reuse names;
// after loading the sibling, a name means what the sibling defines, and a
// name only the left level defined is gone.
func TestPathTranslatorForgetsLeftLevels(t *testing.T) {
	l1 := []string{"(define-fun t1 () (_ BitVec 8) (select pkt0 #x0000000c))"}
	l2 := []string{"(define-fun t2 () Bool (= t1 #x08))", "(declare-const a3 (_ BitVec 32))"}
	l3 := []string{"(define-fun t2 () Bool (= t1 #x86))"}
	var p pathTranslator
	tr := p.load([][]string{l1, l2})
	if _, ok := tr.def("t2"); !ok || tr.raw["t2"] != l2[0] {
		t.Fatal("t2 not defined after the first path")
	}
	tr = p.load([][]string{l1, l3})
	if d, ok := tr.def("t2"); !ok || len(d.list) != 3 || d.list[2].atom != "#x86" {
		t.Errorf("t2 after the sibling: %q, want the sibling's definition", tr.raw["t2"])
	}
	if _, ok := tr.widths["a3"]; ok {
		t.Error("a3, declared only on the left level, is still known")
	}
	if _, ok := tr.def("t1"); !ok {
		t.Error("t1 of the shared level was forgotten")
	}
}
