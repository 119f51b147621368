package replay

import (
	"bytes"
	"context"
	"os"
	"testing"

	"github.com/dpperf/dpperf/cfg"
)

// BenchmarkReplay replays the example capture through flowtable, reading
// from memory, and reports packets per second: the interpreter alone, and
// with each run mapped onto the graph. The map state carries over from
// one pass to the next (TCP flows close, UDP flows stay).
func BenchmarkReplay(b *testing.B) {
	data, err := os.ReadFile(mixedPcap)
	if err != nil {
		b.Fatal(err)
	}
	p := flowtable(b)
	g, err := cfg.Build(p, cfg.Options{})
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		g    *cfg.Graph
	}{{"interp", nil}, {"interp+graph", g}} {
		b.Run(c.name, func(b *testing.B) {
			r, err := New(p, Options{Graph: c.g})
			if err != nil {
				b.Fatal(err)
			}
			packets := 0
			for b.Loop() {
				rd, err := NewReader(bytes.NewReader(data), "mixed.pcap")
				if err != nil {
					b.Fatal(err)
				}
				sum, err := r.Run(context.Background(), rd, func(*Packet) error { return nil })
				if err != nil {
					b.Fatal(err)
				}
				packets += sum.Packets
			}
			b.ReportMetric(float64(packets)/b.Elapsed().Seconds(), "packets/s")
		})
	}
}
