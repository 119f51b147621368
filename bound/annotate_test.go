package bound

import (
	"math"
	"strings"
	"testing"

	"github.com/dpperf/dpperf/bpfprog"
	"github.com/dpperf/dpperf/internal/testobj"
)

// TestLineBreakdown: the per-line costs of a reported path add up to the
// path's cost on every component (naive paths carry no refinement), the
// shares to one, the instructions to the path's; the per-packet overhead
// has a line of its own, and a helper's cost lands on its call's line.
func TestLineBreakdown(t *testing.T) {
	for _, c := range []struct{ obj, target, helperLine string }{
		{"fig2", "x86-64", "bpf_map_lookup_elem"},
		{"fig2", "nfp-agilio-cx", "bpf_map_lookup_elem"},
		{"flowtable", "x86-64", "bpf_map_lookup_elem"},
		{"parser", "nfp-agilio-cx-fwhash", ""},
	} {
		p, err := bpfprog.LoadFile(testobj.Built(t, c.obj), "")
		if err != nil {
			t.Fatal(err)
		}
		r := analyze(t, p, c.target, 3)
		for _, pr := range r.Paths {
			sums := map[string]float64{}
			share, insns := 0.0, 0
			for _, l := range pr.Lines {
				for k, v := range l.Cost {
					sums[k] += v
				}
				share += l.Share
				insns += l.Instructions
			}
			for comp, want := range pr.Cost {
				if math.Abs(sums[comp]-want) > 1e-6*math.Max(1, want) {
					t.Errorf("%s on %s, path %d: lines cost %g %s, the path %g", c.obj, c.target, pr.Rank, sums[comp], comp, want)
				}
			}
			if math.Abs(share-1) > 1e-6 || insns != pr.Instructions {
				t.Errorf("%s on %s, path %d: shares sum to %g, instructions %d of %d", c.obj, c.target, pr.Rank, share, insns, pr.Instructions)
			}
			if len(pr.Lines) == 0 || !strings.Contains(pr.Lines[0].Text, "per-packet overhead") {
				t.Errorf("%s on %s: first line %+v, want the per-packet overhead", c.obj, c.target, pr.Lines[0])
			}
			if c.helperLine == "" {
				continue
			}
			for _, l := range pr.Lines {
				if strings.Contains(l.Text, c.helperLine) && l.Cost[r.Target.Components[0].Name] <= 0 {
					t.Errorf("%s on %s: the helper's line %s costs nothing", c.obj, c.target, l.Loc)
				}
			}
		}
	}
}
