package perfiface

import (
	"context"
	"fmt"
	"testing"

	"github.com/dpperf/dpperf/internal/testobj"
	"github.com/dpperf/dpperf/replay/rootcause"
)

const mixedPcap = "../examples/interface/mixed.pcap"

func flowtableInterface(t *testing.T, metric string) *Interface {
	t.Helper()
	_, ex := explore(t, testobj.Built(t, "flowtable"), "")
	it, err := Build(ex, metric, nil, "flowtable")
	if err != nil {
		t.Fatal(err)
	}
	return it
}

// TestDeployInsnsExact: under the instruction metric, every packet of the
// trace is predicted exactly the interpreter's count, and the packets off
// the explored paths are exactly the frames below symex's 60-byte minimum.
func TestDeployInsnsExact(t *testing.T) {
	it := flowtableInterface(t, MetricInsns)
	for _, res := range []float64{0, 10, 40} {
		d, err := NewDeployment(it, DeployOptions{Resolution: res})
		if err != nil {
			t.Fatal(err)
		}
		if err := d.Replay(context.Background(), mixedPcap, nil); err != nil {
			t.Fatal(err)
		}
		if d.InsnMismatch != 0 {
			t.Errorf("resolution %g: %d packets with a path count other than the interpreter's", res, d.InsnMismatch)
		}
		for _, p := range d.Packets {
			if p.Cost != float64(p.Insns) {
				t.Fatalf("packet %d: predicted %g instructions, interpreter %d", p.Index, p.Cost, p.Insns)
			}
		}
		if got := len(d.Packets) + d.NotRun + d.OffPath; got != d.Frames {
			t.Errorf("resolution %g: %d priced + %d not run + %d off path != %d frames", res, len(d.Packets), d.NotRun, d.OffPath, d.Frames)
		}
		if d.Frames != 857 || d.NotRun != 5 || d.OffPath != 0 {
			t.Errorf("resolution %g: %s", res, d.Summary())
		}
		// Every class in the pruned tree has packets, and their counts add up.
		n := 0
		var walk func(v *VNode)
		walk = func(v *VNode) {
			if v.leaf() {
				c := d.ClassOf(v)
				if c.Packets == 0 {
					t.Errorf("class %d without packets left in the tree", c.ID)
				}
				n += c.Packets
				return
			}
			walk(v.Then)
			walk(v.Else)
		}
		walk(d.Root)
		if n != len(d.Packets) {
			t.Errorf("resolution %g: tree holds %d packets, %d priced", res, n, len(d.Packets))
		}
	}
}

// TestRootCauseKnownAnswer plants a slow class behind one test and a PCV
// that adds cost among fast packets: the test's outcome must rank first,
// met by every slow packet and no fast one.
func TestRootCauseKnownAnswer(t *testing.T) {
	d := &Deployment{Classes: []*Class{
		{ID: 0, Route: []Step{{Test: "pkt.ip.proto == 6", Holds: true}, {Test: "flows.contains(key)", Holds: false}}},
		{ID: 1, Route: []Step{{Test: "pkt.ip.proto == 6", Holds: true}, {Test: "flows.contains(key)", Holds: true}}},
		{ID: 2, Route: []Step{{Test: "pkt.ip.proto == 6", Holds: false}}},
	}}
	for i := range 200 {
		pc := PacketCost{Index: i, Vars: map[string]float64{"traversals_flows": float64(i % 3)}}
		switch {
		case i%10 == 0: // 10%: inserts
			pc.Class, pc.Cost = 0, 300+4*pc.Vars["traversals_flows"]
		case i%2 == 0:
			pc.Class, pc.Cost = 1, 100+4*pc.Vars["traversals_flows"]
		default:
			pc.Class, pc.Cost = 2, 40
		}
		d.Packets = append(d.Packets, pc)
	}
	tab, err := d.RootCause(rootcause.Slow{Percentile: 90})
	if err != nil {
		t.Fatal(err)
	}
	top := tab.Rows[0]
	if top.Name != "not (flows.contains(key))" || top.SlowShare != 1 || top.FastShare != 0 || tab.Slow != 20 {
		t.Fatalf("top row %+v of %d slow packets", top, tab.Slow)
	}
	if fmt.Sprintf("%.2f", top.Score) != "1.00" {
		t.Errorf("score %g, want 1", top.Score)
	}
}
