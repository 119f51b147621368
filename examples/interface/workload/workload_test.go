package workload

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

var update = flag.Bool("update", false, "rewrite examples/interface/mixed.pcap")

const pcapFile = "../mixed.pcap"

// TestGolden: the committed example pcap is what the default
// configuration generates, and it stays small.
func TestGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := WritePcap(&buf, Generate(Config{Seed: 1})); err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(pcapFile, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(pcapFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Fatalf("%s differs from the generator's output: run go test ./examples/interface/workload -update", filepath.Clean(pcapFile))
	}
	if len(want) >= 200<<10 {
		t.Errorf("%s has %d bytes, want under 200 KiB", pcapFile, len(want))
	}
}

// TestMix: every kind appears, flows repeat (a SYN precedes each
// flow's other packets), the seed decides the trace.
func TestMix(t *testing.T) {
	c := Config{Seed: 7}
	pkts := Generate(c)
	kinds := map[string]int{}
	v6 := 0
	for i, p := range pkts {
		kinds[p.Kind]++
		if p.IPv6 {
			v6++
		}
		if i > 0 && !p.Time.After(pkts[i-1].Time) {
			t.Fatalf("packet %d: timestamps not increasing", i)
		}
	}
	for _, k := range []string{TCPSyn, TCPEst, TCPFin, TCPStray, UDP, ICMP, ARP, Malformed} {
		if kinds[k] == 0 {
			t.Errorf("no %s packets in %v", k, kinds)
		}
	}
	if kinds[TCPSyn] != 60 || kinds[TCPFin] != 60 || kinds[TCPEst] < 60 || kinds[UDP] < 40 {
		t.Errorf("flow packets %v, want 60 SYN, 60 FIN, at least 60 established, 40 UDP", kinds)
	}
	if v6 == 0 || v6 == len(pkts) {
		t.Errorf("%d of %d packets IPv6, want a mix", v6, len(pkts))
	}
	again := Generate(c)
	if !slices.EqualFunc(pkts, again, func(a, b Packet) bool { return bytes.Equal(a.Data, b.Data) && a.Time.Equal(b.Time) }) {
		t.Error("the same seed gave another trace")
	}
	other := Generate(Config{Seed: 8})
	if slices.EqualFunc(pkts, other, func(a, b Packet) bool { return bytes.Equal(a.Data, b.Data) }) {
		t.Error("another seed gave the same trace")
	}
}
