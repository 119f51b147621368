package bound

import (
	"context"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/dpperf/dpperf/bpfprog"
	"github.com/dpperf/dpperf/cfg"
	"github.com/dpperf/dpperf/internal/testobj"
)

type benchProg struct{ name, file, prog string }

func benchProgs(b *testing.B) []benchProg {
	return []benchProg{
		{"explode", testobj.Built(b, "explode"), ""},
		{"xdpfilt_alw_all", filepath.Join(testobj.LibXDPDir, "xdpfilt_alw_all.o"), ""},
		{"test_xdp_noinline_v6", testobj.Built(b, "test_xdp_noinline"), "balancer_ingress_v6"},
	}
}

// BenchmarkNaiveBound measures the whole analysis up to the naive bound:
// reading the object, building and pricing the graph, the slowest path.
func BenchmarkNaiveBound(b *testing.B) {
	tg := mustTarget(b, "nfp-agilio-cx")
	for _, bp := range benchProgs(b) {
		b.Run(bp.name, func(b *testing.B) {
			for b.Loop() {
				p, err := bpfprog.LoadFile(bp.file, bp.prog)
				if err != nil {
					b.Fatal(err)
				}
				g, err := cfg.Build(p, cfg.Options{})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := Naive(context.Background(), Cost(g, tg), 1); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkEnumerate measures ordered path enumeration: one op is one path
// produced (at its bottleneck). bytes/path counts the stored prefixes.
func BenchmarkEnumerate(b *testing.B) {
	tg := mustTarget(b, "nfp-agilio-cx")
	for _, bp := range benchProgs(b)[:2] {
		b.Run(bp.name, func(b *testing.B) {
			p, err := bpfprog.LoadFile(bp.file, bp.prog)
			if err != nil {
				b.Fatal(err)
			}
			g, err := cfg.Build(p, cfg.Options{})
			if err != nil {
				b.Fatal(err)
			}
			o, err := NewOrdered(Cost(g, tg))
			if err != nil {
				b.Fatal(err)
			}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			n := 0
			for b.Loop() {
				if _, ok := o.Next(); !ok {
					b.Skipf("%s has only %d paths", bp.name, n)
				}
				n++
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			b.ReportMetric(float64(o.Elements()*16)/float64(n), "prefix-bytes/path")
			b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(n), "heap-bytes/path")
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "paths/s")
		})
	}
}

// BenchmarkSSPChecks measures the search for the slowest satisfiable path
// on parser-heavy programs, a fixed number of paths per op (MaxChecks), so
// that a CPU profile of it (go test -cpuprofile) shows where a long search
// spends its time: symbolic execution, the solver's round trips, the
// enumeration, lemma matching.
func BenchmarkSSPChecks(b *testing.B) {
	cases := []struct {
		prog, target string
		metric       Metric
		checks       int
	}{
		{"dns_qname", "x86-64", PacketRate, 200},
		{"dns_qname", "nfp-agilio-cx", PacketRate, 40},
		{"ipv6ext_quic", "nfp-agilio-cx", BitRate, 200},
		{"explode_pairs", "nfp-agilio-cx", PacketRate, 20000},
		{"explode_far", "nfp-agilio-cx", PacketRate, 20000},
		{"rtp_table", "nfp-agilio-cx", PacketRate, 0},
	}
	for _, bc := range cases {
		b.Run(bc.prog+"/"+bc.target+"/"+bc.metric.String(), func(b *testing.B) {
			c := costed(b, bc.prog, bc.target)
			checked := 0
			for b.Loop() {
				r, err := SSP(context.Background(), c, SearchOptions{Metric: bc.metric, MaxChecks: bc.checks})
				if err != nil {
					b.Fatal(err)
				}
				checked += r.Search.Checked
			}
			b.ReportMetric(float64(checked)/b.Elapsed().Seconds(), "paths/s")
		})
	}
}
