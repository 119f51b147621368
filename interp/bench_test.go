package interp

import (
	"testing"

	"github.com/dpperf/dpperf/interp/inputs"
)

// BenchmarkRun runs a mix of packets through each example program and
// reports packets and instructions per second.
func BenchmarkRun(b *testing.B) {
	pkts := inputs.Packets(9, 256)
	for _, p := range examplePrograms(b, true) {
		b.Run(name(p), func(b *testing.B) {
			it, maps := setup(b, p, inputs.StartState(p, 9))
			insns := 0
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				res, err := it.Run(Input{Packet: pkts[i%len(pkts)]}, maps)
				if err != nil {
					b.Fatal(err)
				}
				insns += res.Count
			}
			s := b.Elapsed().Seconds()
			b.ReportMetric(float64(b.N)/s, "pkts/s")
			b.ReportMetric(float64(insns)/s, "insns/s")
		})
	}
}
