package perfiface

import (
	"context"
	"testing"

	"github.com/dpperf/dpperf/bpfprog"
	"github.com/dpperf/dpperf/cfg"
	"github.com/dpperf/dpperf/internal/testobj"
)

// BenchmarkExplore reports feasible paths per second on the largest
// program whose interface we extract in tests: xdpfilt_alw_all (425
// instruction slots, 3 maps, ~10^10 graph paths), stopped at 2000
// feasible paths, two solver processes.
func BenchmarkExplore(b *testing.B) {
	p, err := bpfprog.LoadFile(testobj.LibXDPDir+"/xdpfilt_alw_all.o", "")
	if err != nil {
		b.Fatal(err)
	}
	g, err := cfg.Build(p, cfg.Options{})
	if err != nil {
		b.Fatal(err)
	}
	paths := 0
	for b.Loop() {
		ex, err := Explore(context.Background(), g, ExploreOptions{Workers: 2, MaxPaths: 2000})
		if err != nil {
			b.Fatal(err)
		}
		paths += len(ex.Paths)
	}
	b.ReportMetric(float64(paths)/b.Elapsed().Seconds(), "paths/s")
}
