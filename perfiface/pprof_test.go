package perfiface

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

// TestProfileOfClasses: the profile of flowtable's interface has a sample
// per class whose stack is the class over its route of tests; without a
// trace the values are the classes' costs, with one they add up to the
// cost and the count of the priced packets.
func TestProfileOfClasses(t *testing.T) {
	it := flowtableInterface(t, MetricInsns)
	v := it.View(10)
	var buf bytes.Buffer
	if err := it.WriteProfile(&buf, v, nil); err != nil {
		t.Fatal(err)
	}
	p, err := profile.Parse(&buf)
	if err != nil {
		t.Fatalf("the profile does not parse: %v", err)
	}
	i := 0
	eachClass(v.Root, func(leaf *VNode, route []Step) {
		if i >= len(p.Sample) {
			t.Fatalf("%d samples, more classes", len(p.Sample))
		}
		s := p.Sample[i]
		top := s.Location[0].Line[0].Function.Name
		if !strings.HasPrefix(top, "class ") || len(s.Location) != len(route)+1 {
			t.Errorf("sample %d: top %q, %d frames for a route of %d tests", i, top, len(s.Location), len(route))
		}
		if want := int64((leaf.Lo+leaf.Hi)/2*1000 + 0.5); s.Value[0] != want {
			t.Errorf("class %d: value %d, want %d", i, s.Value[0], want)
		}
		i++
	})
	if i != len(p.Sample) || i != v.Classes() {
		t.Errorf("%d samples, %d classes", len(p.Sample), v.Classes())
	}

	d, err := NewDeployment(it, DeployOptions{Resolution: 10})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Replay(context.Background(), mixedPcap, nil); err != nil {
		t.Fatal(err)
	}
	buf.Reset()
	if err := it.WriteProfile(&buf, nil, d); err != nil {
		t.Fatal(err)
	}
	if p, err = profile.Parse(&buf); err != nil {
		t.Fatal(err)
	}
	var cost, packets int64
	for _, s := range p.Sample {
		cost, packets = cost+s.Value[0], packets+s.Value[1]
	}
	want := 0.0
	for _, pc := range d.Packets {
		want += pc.Cost
	}
	if packets != int64(len(d.Packets)) || cost < int64(want*1000)-int64(len(p.Sample)) || cost > int64(want*1000)+int64(len(p.Sample)) {
		t.Errorf("profile: %d packets costing %d, the deployment %d costing %g", packets, cost, len(d.Packets), want*1000)
	}
}
