package measure

import (
	"context"
	"testing"

	"github.com/dpperf/dpperf/bound"
	"github.com/dpperf/dpperf/bpfprog"
	"github.com/dpperf/dpperf/calibrate"
	"github.com/dpperf/dpperf/cfg"
	"github.com/dpperf/dpperf/internal/testobj"
	"github.com/dpperf/dpperf/target"
)

// TestChecksPriceOutcomes: under a target that prices a lookup's hit and
// miss apart, a replay of the bound's path is predicted at the bound's
// rate and expected at the expected rate: its lookups priced by the
// outcomes of the same example, not by the dearest.
func TestChecksPriceOutcomes(t *testing.T) {
	p, err := bpfprog.LoadFile(testobj.Built(t, "flowcount"), "")
	if err != nil {
		t.Fatal(err)
	}
	g, err := cfg.Build(p, cfg.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tg, err := target.Load("../target/testdata/outcomes.yaml")
	if err != nil {
		t.Fatal(err)
	}
	te, err := calibrate.Expected(tg)
	if err != nil || te == nil {
		t.Fatalf("expected target: %v", err)
	}
	c, e := bound.Cost(g, tg), bound.Cost(g, te)
	res, err := bound.SSP(context.Background(), c, bound.SearchOptions{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	res.SetExpected(e)
	pr := &res.Paths[0]
	if len(pr.Lookups) == 0 || pr.Lookups[0].Priced == "dearest" {
		t.Fatalf("lookups %+v: want one priced by its outcome", pr.Lookups)
	}
	pc := pricer{g: g, guarantee: c, expected: e}
	ch, err := pc.check(pr, "example", "repeated", predicted(g, pr.Edges), 100, 0)
	if err != nil {
		t.Fatal(err)
	}
	if ch.Predicted != res.Bound.PacketRate || ch.Expected != pr.ExpectedRate || ch.Expected != res.Expected.PacketRate {
		t.Errorf("check predicted %g, expected %g; bound %g, expected %g", ch.Predicted, ch.Expected, res.Bound.PacketRate, pr.ExpectedRate)
	}
	if dearest := c.PacketRateOf(pr.Edges); ch.Predicted <= dearest {
		t.Errorf("predicted %g, not above the dearest outcome's %g", ch.Predicted, dearest)
	}
}
