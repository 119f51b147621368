package perfiface

import (
	"context"
	"testing"

	"github.com/dpperf/dpperf/internal/testobj"
)

// BenchmarkExplore reports feasible paths per second, two solver
// processes, each run stopped at 2000 feasible paths, on the largest
// programs we have: xdpfilt_alw_all (425 instruction slots, 3 maps, ~10^10
// graph paths) and test_xdp_noinline (1037 slots in 20 functions, 7 maps,
// two hashes of the flow).
func BenchmarkExplore(b *testing.B) {
	for _, bc := range []struct{ name, file, prog string }{
		{"xdpfilt_alw_all", testobj.LibXDPDir + "/xdpfilt_alw_all.o", ""},
		{"test_xdp_noinline_v4", testobj.Built(b, "test_xdp_noinline"), "balancer_ingress_v4"},
		{"test_xdp_noinline_v6", testobj.Built(b, "test_xdp_noinline"), "balancer_ingress_v6"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			g := graphOf(b, bc.file, bc.prog)
			paths := 0
			for b.Loop() {
				ex, err := Explore(context.Background(), g, ExploreOptions{Workers: 2, MaxPaths: 2000})
				if err != nil {
					b.Fatal(err)
				}
				paths += len(ex.Paths)
			}
			b.ReportMetric(float64(paths)/b.Elapsed().Seconds(), "paths/s")
		})
	}
}

// BenchmarkExactKatran reports classes per second of Katran's exact
// interfaces (--resolution 0: every feasible path explored and priced,
// two solver processes), the figure the exact interface is held to.
func BenchmarkExactKatran(b *testing.B) {
	for _, prog := range []string{"balancer_ingress_v4", "balancer_ingress_v6"} {
		b.Run(prog, func(b *testing.B) {
			g := graphOf(b, testobj.Built(b, "test_xdp_noinline"), prog)
			classes := 0
			for b.Loop() {
				ex, err := Explore(context.Background(), g, ExploreOptions{Workers: 2})
				if err != nil {
					b.Fatal(err)
				}
				it, err := Build(ex, MetricInsns, nil, prog)
				if err != nil {
					b.Fatal(err)
				}
				classes += it.View(0).Classes()
			}
			b.ReportMetric(float64(classes)/b.Elapsed().Seconds(), "classes/s")
		})
	}
}
