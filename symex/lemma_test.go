package symex

import (
	"context"
	"slices"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/dpperf/dpperf/bpfprog"
	"github.com/dpperf/dpperf/cfg"
	"github.com/dpperf/dpperf/internal/testobj"
	"github.com/dpperf/dpperf/smt"
)

// TestLemmasAgreeWithSolver: with lemmas, every path gets the verdict the
// solver gives it alone (a lemma never refutes a satisfiable path), and on
// the program built to explode, lemmas refute most paths without the
// solver.
func TestLemmasAgreeWithSolver(t *testing.T) {
	for _, name := range []string{"explode_pairs", "fig2", "parser", "flowtable", "call"} {
		t.Run(name, func(t *testing.T) {
			g := graphOf(t, testobj.Built(t, name), "")
			plain, err := NewChecker(g, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer plain.Close()
			ls := &Lemmas{}
			learner, err := NewChecker(g, Options{Lemmas: ls})
			if err != nil {
				t.Fatal(err)
			}
			defer learner.Close()
			ctx := context.Background()
			paths := allPaths(t, g, 300)
			for i, p := range paths {
				before := learner.ByLemma
				got, err := learner.Check(ctx, p)
				if err != nil {
					t.Fatal(err)
				}
				want, err := plain.Check(ctx, p)
				if err != nil {
					t.Fatal(err)
				}
				if got.Result != want.Result && got.Result != smt.Unknown && want.Result != smt.Unknown {
					t.Fatalf("path %d: %v with lemmas (refuted by a lemma: %v), %v without", i, got.Result, learner.ByLemma > before, want.Result)
				}
				if got.Result == smt.Unsat && (got.Prefix < 1 || got.Prefix > len(p)) {
					t.Fatalf("path %d: refuted prefix %d of %d edges", i, got.Prefix, len(p))
				}
			}
			t.Logf("%d paths: %d lemmas learned, %d paths refuted by one; solver checks %d with lemmas, %d without",
				len(paths), ls.Len(), learner.ByLemma, learner.Checks, plain.Checks)
			if name == "explode_pairs" && learner.ByLemma < len(paths)/2 {
				t.Fatalf("lemmas refuted %d of %d paths of explode_pairs, want at least half", learner.ByLemma, len(paths))
			}
		})
	}
}

// TestLemmaTextCanonical: the text of a window names what the path
// defined by rank of appearance, keeps the inputs' names, and holds the
// definitions the assertions use and no others.
func TestLemmaTextCanonical(t *testing.T) {
	levels := [][]string{
		{"(define-fun t1 () (_ BitVec 8) (select pkt0 #x00000000))", "(define-fun t2 () (_ BitVec 8) (select pkt0 #x00000001))"},
		{"(define-fun t3 () Bool (= t1 #x07))", "(assert t3)", "; @note t3"},
		{"(declare-const u4 (_ BitVec 8))", "(define-fun t5 () Bool (= t1 u4))", "(assert (not t5))"},
	}
	w := &window{levels: levels, def: map[string]defAt{}}
	for i, l := range levels {
		for j, line := range l {
			if n := definedName(line); n != "" {
				w.def[n] = defAt{i, j}
			}
		}
	}
	want := "(define-fun k0 () (_ BitVec 8) (select pkt0 #x00000000))\n" +
		"(declare-const k1 (_ BitVec 8))\n" +
		"(define-fun k2 () Bool (= k0 k1))\n" +
		"(assert (not k2))"
	if got := w.text(2, 3); got != want {
		t.Fatalf("window [2,3):\n%s\nwant:\n%s", got, want)
	}
	if got := w.text(0, 1); got != "" {
		t.Fatalf("a window without assertions gave %q", got)
	}
	if a, b := w.text(1, 3), w.text(1, 3); a != b || len(a) == 0 {
		t.Fatalf("text not deterministic: %q, %q", a, b)
	}
}

// contextual is a program whose last two branches contradict each other
// on one path into them and not on the other: x is 5 or 6 by the first
// packet byte, and the second byte is compared with x and then with 5.
func contextual(t *testing.T) *cfg.Graph {
	t.Helper()
	insns := asm.Instructions{
		asm.Mov.Imm(asm.R0, 2),
		asm.LoadMem(asm.R2, asm.R1, 0, asm.Word), // data
		asm.LoadMem(asm.R3, asm.R1, 4, asm.Word), // data_end
		asm.Mov.Reg(asm.R4, asm.R2),
		asm.Add.Imm(asm.R4, 2),
		asm.JGT.Reg(asm.R4, asm.R3, ""), // → exit
		asm.LoadMem(asm.R5, asm.R2, 0, asm.Byte),
		asm.LoadMem(asm.R6, asm.R2, 1, asm.Byte),
		asm.Mov.Imm(asm.R7, 5),
		asm.JEq.Imm(asm.R5, 1, ""), // → keep 5
		asm.Mov.Imm(asm.R7, 6),
		asm.JNE.Reg(asm.R6, asm.R7, ""), // second byte == x: fall through
		asm.Mov.Imm(asm.R0, 1),
		asm.JEq.Imm(asm.R6, 5, ""), // second byte != 5: fall through
		asm.Mov.Imm(asm.R0, 3),
		asm.Return(),
	}
	insns[5].Offset = 9
	insns[9].Offset = 1
	insns[11].Offset = 1
	insns[13].Offset = 1
	p, err := bpfprog.New("contextual", ebpf.XDP, insns, nil)
	return graphFrom(t, p, err)
}

// TestLemmaNeedsSameText: the window that refutes the path with x = 5
// (second byte == 5 and != 5) runs over the same edges on the path with
// x = 6, which can run; checked in either order, that path stays
// satisfiable.
func TestLemmaNeedsSameText(t *testing.T) {
	g := contextual(t)
	paths := allPaths(t, g, 100)
	for _, order := range []string{"forward", "reverse"} {
		if order == "reverse" {
			slices.Reverse(paths)
		}
		plain, err := NewChecker(g, Options{})
		if err != nil {
			t.Fatal(err)
		}
		ls := &Lemmas{}
		learner, err := NewChecker(g, Options{Lemmas: ls})
		if err != nil {
			t.Fatal(err)
		}
		unsat := 0
		for i, p := range paths {
			got, err := learner.Check(context.Background(), p)
			if err != nil {
				t.Fatal(err)
			}
			want, err := plain.Check(context.Background(), p)
			if err != nil {
				t.Fatal(err)
			}
			if got.Result != want.Result {
				t.Fatalf("%s, path %d: %v with lemmas, %v without", order, i, got.Result, want.Result)
			}
			if want.Result == smt.Unsat {
				unsat++
			}
		}
		plain.Close()
		learner.Close()
		if unsat == 0 || ls.Len() == 0 {
			t.Fatalf("%s: %d of %d paths refuted, %d lemmas learned; the program should teach one", order, unsat, len(paths), ls.Len())
		}
	}
}
