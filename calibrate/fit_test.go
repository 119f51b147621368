package calibrate

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/dpperf/dpperf/target"
)

// samplesOf builds samples whose times are exactly the shares scaled by
// want (the chain and map_write groups' shares 0 unless want names them),
// plus noise (a fraction of the time, uniformly in [0, noise]).
func samplesOf(r *rand.Rand, n int, want map[string]float64, noise float64) []*Sample {
	var ss []*Sample
	for range n {
		s := &Sample{Program: "synthetic", Share: make([]float64, len(target.Groups))}
		for i, g := range target.Groups {
			if _, ok := want[g]; ok || (g != target.GroupChain && g != target.GroupMapWrite) {
				s.Share[i] = 1 + 50*r.Float64() // no chain share: a target without a chain section
			}
		}
		t := s.Predicted(want)
		s.High = t * (1 + noise*r.Float64())
		s.Median = t
		ss = append(ss, s)
	}
	return ss
}

func TestFitKnownScales(t *testing.T) {
	want := map[string]float64{target.GroupALU: 0.3, target.GroupBranch: 0.5, target.GroupMemory: 0.8}
	groups := []string{target.GroupALU, target.GroupBranch, target.GroupMemory}
	for _, kind := range []string{Envelope, Median} {
		ss := samplesOf(rand.New(rand.NewPCG(1, 2)), 40, want, 0)
		res, err := Fit(ss, FitOptions{Kind: kind, Groups: groups, Min: 0.05, Max: 2})
		if err != nil {
			t.Fatal(err)
		}
		for g, w := range want {
			if math.Abs(res.Scale[g]-w) > 1e-6 {
				t.Errorf("%s: scale of %s = %g, want %g", kind, g, res.Scale[g], w)
			}
		}
		if math.Abs(res.ErrMax) > 1e-6 || math.Abs(res.ErrMin) > 1e-6 {
			t.Errorf("%s: errors %g..%g on exact samples", kind, res.ErrMin, res.ErrMax)
		}
		// An envelope keeps the median fit as its expected scales.
		if kind == Envelope {
			for g, w := range want {
				if math.Abs(res.Expected[g]-w) > 1e-6 {
					t.Errorf("expected scale of %s = %g, want %g", g, res.Expected[g], w)
				}
			}
		} else if res.Expected != nil {
			t.Errorf("a median fit with expected scales %v", res.Expected)
		}
	}
}

// The envelope never predicts a sample below its time, and it is the
// lowest such fit: no fitted group can shrink without breaking that.
func TestFitEnvelopeIsTightUpperBound(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	want := map[string]float64{target.GroupALU: 0.4, target.GroupBranch: 0.6}
	groups := []string{target.GroupALU, target.GroupBranch}
	ss := samplesOf(r, 60, want, 0.3)
	res, err := Fit(ss, FitOptions{Kind: Envelope, Groups: groups, Min: 0, Max: 3})
	if err != nil {
		t.Fatal(err)
	}
	if res.ErrMin < -1e-9 {
		t.Fatalf("a sample is predicted %.3g%% below its time", -100*res.ErrMin)
	}
	for _, g := range groups {
		less := map[string]float64{}
		for k, v := range res.Scale {
			less[k] = v
		}
		less[g] *= 0.99
		below := false
		for _, s := range ss {
			below = below || s.Predicted(less) < s.High
		}
		if !below {
			t.Errorf("shrinking %s by 1%% still covers every sample: the envelope is not tight", g)
		}
	}
}

func TestFitErrors(t *testing.T) {
	ss := samplesOf(rand.New(rand.NewPCG(5, 6)), 5, map[string]float64{target.GroupALU: 5}, 0)
	if _, err := Fit(ss, FitOptions{Kind: Envelope, Groups: []string{target.GroupALU}, Min: 0, Max: 1}); err == nil {
		t.Error("fit under a too low maximum scale succeeded")
	}
	if _, err := Fit(ss, FitOptions{Kind: "mean", Groups: []string{target.GroupALU}, Max: 1}); err == nil {
		t.Error("unknown kind accepted")
	}
	if _, err := Fit(nil, FitOptions{Kind: Envelope}); err == nil {
		t.Error("no samples accepted")
	}
}

// Held out, a program whose paths need a dearer scale than the others'
// is short by the ratio of the two, of its own cost (the per-packet
// overhead, the same for both, left out), and the envelope widens every
// group but the overhead by that.
func TestFitHoldOutKnownMargin(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	alu := []string{target.GroupALU}
	ai := slices.Index(target.Groups, target.GroupALU)
	a := samplesOf(r, 10, map[string]float64{target.GroupALU: 0.4}, 0)
	b := samplesOf(r, 10, map[string]float64{target.GroupALU: 0.5}, 0)
	aluAndOverhead(append(a, b...))
	for _, s := range a {
		s.Program, s.High = "a", 30+0.4*s.Share[ai]
	}
	for _, s := range b {
		s.Program, s.High = "b", 30+0.5*s.Share[ai]
	}
	res, err := Fit(append(a, b...), FitOptions{Kind: Envelope, Groups: alu, Min: 0, Max: 2, HoldOut: true})
	if err != nil {
		t.Fatal(err)
	}
	short := map[string]float64{}
	for _, h := range res.HeldOut {
		short[h.Program] = h.Short
	}
	if math.Abs(short["a"]+0.2) > 1e-6 || math.Abs(short["b"]-0.25) > 1e-6 {
		t.Errorf("held out %v, want a −0.2 (fit of b: 0.5 against 0.4) and b +0.25", res.HeldOut)
	}
	if math.Abs(res.Margin-0.25) > 1e-6 || math.Abs(res.Scale[target.GroupALU]-0.625) > 1e-6 {
		t.Errorf("margin %g, scale %g: want 0.25 and 0.5 × 1.25", res.Margin, res.Scale[target.GroupALU])
	}
	if f, ok := res.Scale[target.GroupPerPacket]; ok && f != 1 {
		t.Errorf("per_packet scaled %g: the overhead is not widened", f)
	}
	if f := res.Scale[target.GroupHelper]; math.Abs(f-1.25) > 1e-9 {
		t.Errorf("helper (not fitted) scaled %g, want 1.25", f)
	}
	for _, s := range b {
		// Each of b's paths: its own cost a quarter above 0.5's.
		if want := 30 + 0.625*s.Share[ai]; math.Abs(s.Predicted(res.Scale)-want) > 1e-6 {
			t.Errorf("b predicted %g, want %g", s.Predicted(res.Scale), want)
		}
	}
	one, err := Fit(b, FitOptions{Kind: Envelope, Groups: alu, Min: 0, Max: 2, HoldOut: true})
	if err != nil || one.HeldOut != nil || one.Margin != 0 {
		t.Errorf("one program: held out %v, margin %g, %v", one.HeldOut, one.Margin, err)
	}
}

// aluAndOverhead leaves the samples' ALU share and the per-packet overhead
// only, the overhead (not fitted) at 30 ns, so that each program's ALU
// scale is exact.
func aluAndOverhead(ss []*Sample) {
	ai, pi := slices.Index(target.Groups, target.GroupALU), slices.Index(target.Groups, target.GroupPerPacket)
	for _, s := range ss {
		for i := range s.Share {
			if i != ai && i != pi {
				s.Share[i] = 0
			}
		}
		s.Share[pi] = 30
	}
}

// TestFitHoldOutNoOwnCost: a held-out program whose own cost a fit of the
// others puts at 0 (the others' times are the overhead alone, so their ALU
// scale is fitted to its minimum 0) sets no margin: the margin is a share
// of the own cost, and there is none to widen (it was +Inf). The envelope
// still covers the program, fitted with it.
func TestFitHoldOutNoOwnCost(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	alu := []string{target.GroupALU}
	ai := slices.Index(target.Groups, target.GroupALU)
	a := samplesOf(r, 10, map[string]float64{target.GroupALU: 0.4}, 0)
	b := samplesOf(r, 10, map[string]float64{target.GroupALU: 0.4}, 0)
	c := samplesOf(r, 10, map[string]float64{target.GroupALU: 0.4}, 0)
	aluAndOverhead(slices.Concat(a, b, c))
	for _, s := range a {
		s.Program, s.High, s.Median = "a", 30, 30
	}
	for _, s := range b {
		s.Program, s.High, s.Median = "b", 30, 30
	}
	for _, s := range c {
		s.Program, s.High = "c", 30+0.4*s.Share[ai]
	}
	res, err := Fit(slices.Concat(a, b, c), FitOptions{Kind: Envelope, Groups: alu, Min: 0, Max: 2, HoldOut: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Margin != 0 || math.Abs(res.Scale[target.GroupALU]-0.4) > 1e-6 {
		t.Errorf("margin %g, ALU scale %g: want 0 and 0.4; held out %v", res.Margin, res.Scale[target.GroupALU], res.HeldOut)
	}
}

// TestSetHigh: a sample's High is the percentile of its slow-state runs
// when it has them, of its runs as measured otherwise.
func TestSetHigh(t *testing.T) {
	s := &Sample{Runs: []float64{10, 11, 12, 13, 30}}
	s.SetHigh(50)
	if s.High != 12 {
		t.Errorf("median of the runs: %g, want 12", s.High)
	}
	s.SlowRuns = []float64{20, 22, 24, 26, 60}
	s.SetHigh(50)
	if s.High != 24 {
		t.Errorf("median of the slow runs: %g, want 24", s.High)
	}
	s.SetHigh(100)
	if s.High != 60 {
		t.Errorf("slowest slow run: %g, want 60", s.High)
	}
}
