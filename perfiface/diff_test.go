package perfiface

import (
	"context"
	"encoding/json"
	"math"
	"net"
	"strings"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/dpperf/dpperf/bpfprog"
	"github.com/dpperf/dpperf/internal/testobj"
	"github.com/dpperf/dpperf/interp"
)

// explain builds the exact instruction interface of a compiled example.
func explain(t *testing.T, name string) (*Interface, *bpfprog.Program) {
	t.Helper()
	p, ex := explore(t, testobj.Built(t, name), "")
	it, err := Build(ex, MetricInsns, nil, name)
	if err != nil {
		t.Fatal(err)
	}
	return it, p
}

// udpFrame is a UDP datagram of a flow no map knows.
func udpFrame(t *testing.T) []byte {
	t.Helper()
	eth := &layers.Ethernet{SrcMAC: net.HardwareAddr{2, 0, 0, 0, 0, 1}, DstMAC: net.HardwareAddr{2, 0, 0, 0, 0, 2},
		EthernetType: layers.EthernetTypeIPv4}
	ip := &layers.IPv4{Version: 4, IHL: 5, TTL: 64, Protocol: layers.IPProtocolUDP,
		SrcIP: net.IP{10, 0, 0, 1}, DstIP: net.IP{10, 0, 0, 2}}
	udp := &layers.UDP{SrcPort: 4000, DstPort: 53}
	if err := udp.SetNetworkLayerForChecksum(ip); err != nil {
		t.Fatal(err)
	}
	buf := gopacket.NewSerializeBuffer()
	err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true},
		eth, ip, udp, gopacket.Payload(make([]byte, 32)))
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// insnsOf runs a packet through p on empty maps and counts instructions.
func insnsOf(t *testing.T, p *bpfprog.Program, pkt []byte) int {
	t.Helper()
	maps, err := interp.NewMaps(p, nil, interp.MapOptions{})
	if err != nil {
		t.Fatal(err)
	}
	it, err := interp.New(p, interp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := it.Run(interp.Input{Packet: pkt}, maps)
	if err != nil {
		t.Fatal(err)
	}
	return res.Count
}

// TestCompareFlowcount is a known-answer test: flowcount_v2 adds a
// per-source limit to new flows; a new UDP flow from a new source is the
// largest regression, by the instructions a hand-built packet of that kind
// executes in each program.
func TestCompareFlowcount(t *testing.T) {
	old, oldProg := explain(t, "flowcount")
	nu, newProg := explain(t, "flowcount_v2")
	d, err := Compare(context.Background(), old, nu, DiffOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pkt := udpFrame(t)
	before, after := insnsOf(t, oldProg, pkt), insnsOf(t, newProg, pkt)
	if after <= before {
		t.Fatalf("oracle: a new UDP flow costs %d then %d instructions; the variant should add work", before, after)
	}
	if len(d.Rows) == 0 {
		t.Fatal("no changed class")
	}
	top := d.Rows[0]
	class := strings.Join(top.Class, " and ")
	if !strings.Contains(class, "pkt.ip.proto == 17") || !strings.Contains(class, "not flows.contains(") {
		t.Errorf("first row is class %q; want the new UDP flow", class)
	}
	want := 100 * float64(after-before) / float64(before)
	if top.Before != float64(before) || top.After != float64(after) || math.Abs(float64(top.Percent)-want) > 1e-9 {
		t.Errorf("first row %v → %v (%v); the packet costs %d → %d (%+.1f%%)", top.Before, top.After, top.Percent, before, after, want)
	}
	for i, r := range d.Rows {
		if r.Delta == 0 || r.Delta != r.After-r.Before {
			t.Errorf("row %d: delta %v for %v → %v", i, r.Delta, r.Before, r.After)
		}
		if i > 0 && r.Percent > d.Rows[i-1].Percent {
			t.Errorf("row %d (%v) ranks below a smaller change (%v)", i, r.Percent, d.Rows[i-1].Percent)
		}
	}
	// Hits, non-IP and other protocols cost the same in both.
	if d.Unchanged == 0 || d.Matched != d.Unchanged+len(d.Rows) {
		t.Errorf("matched %d = unchanged %d + changed %d?", d.Matched, d.Unchanged, len(d.Rows))
	}
	if got := d.Regressions(want); len(got) != 0 {
		t.Errorf("%d regressions above the largest (%v)", len(got), want)
	}
	if got := d.Regressions(want - 0.1); len(got) != 1 {
		t.Errorf("%d regressions just below the largest, want 1", len(got))
	}
}

// TestCompareSelf: a program compared with itself changes nowhere.
func TestCompareSelf(t *testing.T) {
	a, _ := explain(t, "flowcount_v2")
	b, _ := explain(t, "flowcount_v2")
	d, err := Compare(context.Background(), a, b, DiffOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Rows) != 0 || d.Unchanged != d.Old.Classes || len(d.Notes) != 0 {
		t.Errorf("self-comparison: %d rows, %d unchanged of %d classes, notes %q", len(d.Rows), d.Unchanged, d.Old.Classes, d.Notes)
	}
}

func TestPercentJSON(t *testing.T) {
	b, err := json.Marshal([]Percent{12.5, Percent(math.Inf(1)), -3})
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != "[12.5,null,-3]" {
		t.Errorf("got %s", b)
	}
	if s := Percent(math.Inf(1)).String(); s != "+inf%" {
		t.Errorf("got %s", s)
	}
}
