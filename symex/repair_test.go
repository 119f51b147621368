package symex

import (
	"testing"

	"github.com/dpperf/dpperf/smt"
)

// TestRepairKnownAnswers makes conditions over free terms hold by
// repair, and checks each in the witness afterwards; conditions no edit
// can satisfy are left alone.
func TestRepairKnownAnswers(t *testing.T) {
	free := func() map[string]smt.Value {
		pkt, _ := smt.SortZero(arraySort)
		return map[string]smt.Value{"x": smt.BV(32, 0x12345678), "len": smt.BV(64, 60), "pkt0": pkt}
	}
	for _, tc := range []struct {
		cond     string
		possible bool
	}{
		{"(= ((_ extract 7 0) (bvlshr (bvand x #x0000ff00) #x00000008)) #x2a)", true},
		{"(not (= (bvand x #x00000010) #x00000000))", true},
		{"(= (bvand x #x00000010) #x00000000)", true},
		{"(bvugt len #x0000000000000100)", true},
		{"(not (bvuge len #x0000000000000020))", true},
		{"(bvslt ((_ extract 15 0) x) #x0000)", true},
		{"(bvslt ((_ extract 15 0) x) #x8000)", false},
		{"(bvugt len #xffffffffffffffff)", false},
		{"(bvugt x (bvadd x #x00000010))", true}, // an overflow check: x near the top
		{"(bvult (bvsub x #x00000001) x)", true},
		{"(has0_0 ((_ zero_extend 32) x))", true},
		{"(not (has0_0 ((_ zero_extend 32) x)))", true},
		{"(= (select pkt0 #x00000005) #x11)", true},
		{"(= (concat (select pkt0 #x0000000d) (select pkt0 #x0000000c)) #xdd86)", true},
		{"(= (bvor (bvlshr (bvand x #x0000ff00) #x00000008) (bvshl (bvand x #x000000ff) #x00000008)) #x00001234)", true},
		{"(= (bvadd x #x00000005) #x00000003)", true},
		{"(= (bvxor x #xdeadbeef) #x00000000)", true},
		{"(= (select (val0_0 ((_ zero_extend 32) x)) #x00000002) #x07)", true},
		{"(and (= (select pkt0 #x00000014) #x06) (bvuge len #x0000000000000036))", true},
		{"(or (= x #x00000001) (= x #x00000002))", true},
		{"(= (bvor (bvlshr (bvand x #x00000004) #x00000002) #x00000001) #x00000000)", false},
		{"(= (bvmul x x) #x00000003)", false},
	} {
		c := &Checker{opts: Options{MinPacket: 14}}
		w := &witness{free: free()}
		e := c.witnessEnv(w, 0, 0)
		a, err := smt.ParseExpr(tc.cond)
		if err != nil {
			t.Fatal(err)
		}
		ok := e.repair(a)
		v, err := smt.Eval(a, e)
		if err != nil {
			t.Fatalf("%s: %v", tc.cond, err)
		}
		switch {
		case tc.possible && (!ok || !v.True()):
			t.Errorf("%s: repaired %v, holds %v; want it made to hold", tc.cond, ok, v.True())
		case !tc.possible && (ok && v.True()):
			t.Errorf("%s: made to hold, which no value allows", tc.cond)
		case !ok && len(e.edits) > 0:
			t.Errorf("%s: a failed repair left edits %v", tc.cond, e.edits)
		}
	}
}
