package sim

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/dpperf/dpperf/model/analytic"
	"github.com/dpperf/dpperf/model/flow"
	"github.com/dpperf/dpperf/model/spec"
)

func compile(t testing.TB, y string) *flow.Network {
	t.Helper()
	s, err := spec.Read(strings.NewReader(y), "test.yml")
	if err != nil {
		t.Fatal(err)
	}
	n, err := flow.Compile(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// one station of 1e9 B/s, 1000 B packets: service 1 µs.
func single(load, queue string) string {
	return `
hardware:
  ips: [{name: a, throughput: 8Gbit/s, queue: ` + queue + `}]
software:
  graphs:
    - name: g
      vertices: [{name: v, ip: a}]
      edges: [{from: ingress, to: v}, {from: v, to: egress}]
traffic: {ingress: ` + load + `, size: 1000B}
`
}

func within(t *testing.T, what string, got, want, rel float64) {
	t.Helper()
	if math.Abs(got-want) > rel*math.Abs(want) {
		t.Errorf("%s = %.6g, want %.6g ±%.1f%%", what, got, want, 100*rel)
	}
}

func TestMM1(t *testing.T) {
	r, err := Run(context.Background(), compile(t, single("4Gbit/s", "unbounded")), Options{Packets: 400000, Warmup: -1, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	// M/M/1 at ρ = 0.5: sojourn 1/(μ-λ) = 2 µs; sojourn is exponential,
	// so p99 = 2 µs·ln(100).
	within(t, "mean", float64(r.Latency), 2e-6, 0.03)
	within(t, "p99", float64(r.P99), 2e-6*math.Log(100), 0.05)
	within(t, "throughput", float64(r.Throughput), 0.5e9, 0.01)
	within(t, "utilisation", float64(r.Stations[0].Util), 0.5, 0.02)
}

func TestMD1(t *testing.T) {
	r, err := Run(context.Background(), compile(t, single("6.4Gbit/s", "unbounded")), Options{Packets: 300000, Warmup: -1, Seed: 2, Deterministic: true})
	if err != nil {
		t.Fatal(err)
	}
	// M/D/1 at ρ = 0.8: wait ρ·s/(2(1-ρ)) = 2 µs, plus 1 µs service.
	within(t, "mean", float64(r.Latency), 3e-6, 0.03)
}

func TestMM1NBlocking(t *testing.T) {
	r, err := Run(context.Background(), compile(t, single("12Gbit/s", "4")), Options{Packets: 300000, Warmup: -1, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	rho, n := 1.5, 4.0
	pn := math.Pow(rho, n) * (1 - rho) / (1 - math.Pow(rho, n+1))
	within(t, "drop", float64(r.DropShare), pn, 0.03)
	// Carried load: μ(1-P0).
	p0 := (1 - rho) / (1 - math.Pow(rho, n+1))
	within(t, "throughput", float64(r.Throughput), 1e9*(1-p0), 0.02)
}

// The same seed gives the same run.
func TestDeterministicSeed(t *testing.T) {
	n := compile(t, single("4Gbit/s", "8"))
	a, _ := Run(context.Background(), n, Options{Packets: 20000, Seed: 7})
	b, _ := Run(context.Background(), n, Options{Packets: 20000, Seed: 7})
	if a.Latency != b.Latency || a.Events != b.Events {
		t.Errorf("runs differ: %v/%v %v/%v", a.Latency, b.Latency, a.Events, b.Events)
	}
}

func TestCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r, err := Run(ctx, compile(t, single("4Gbit/s", "8")), Options{Packets: 1000000})
	if err == nil || r == nil || !r.Partial {
		t.Fatalf("cancelled run: %v, %+v", err, r)
	}
}

// Model against simulation on a tandem of IPs with fan-out, overheads and
// interface transfers, at utilisation 0.75 of the bottleneck.
func TestAgainstModel(t *testing.T) {
	y := `
hardware:
  interface: 100Gbit/s
  ips:
    - {name: a, throughput: 16Gbit/s, parallelism: 2, queue: 64}
    - {name: b, throughput: 4Gbit/s, parallelism: 1, queue: 64}
    - {name: c, throughput: 12Gbit/s, parallelism: 3, queue: 64}
software:
  graphs:
    - name: g
      vertices: [{name: x, ip: a, overhead: 1us}, {name: y, ip: b}, {name: z, ip: c}]
      edges:
        - {from: ingress, to: x, alpha: 1}
        - {from: x, to: y, delta: 0.25, alpha: 0.25}
        - {from: x, to: z, delta: 0.75, alpha: 0.75}
        - {from: y, to: egress, delta: 0.25}
        - {from: z, to: egress, delta: 0.75}
traffic: {ingress: 12Gbit/s, size: 1500B}
`
	n := compile(t, y)
	m := analytic.Evaluate(n)
	r, err := Run(context.Background(), n, Options{Packets: 300000, Warmup: -1, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	within(t, "throughput", float64(r.Throughput), float64(m.Carried), 0.02)
	within(t, "latency", float64(r.Latency), float64(m.Latency), 0.05)
}

func BenchmarkMillionPackets(b *testing.B) {
	n := compile(b, `
hardware:
  interface: 100Gbit/s
  ips:
    - {name: a, throughput: 16Gbit/s, parallelism: 4, queue: 64}
    - {name: b, throughput: 12Gbit/s, parallelism: 2, queue: 32}
    - {name: c, throughput: 16Gbit/s, parallelism: 4, queue: 64}
software:
  graphs:
    - name: g
      vertices: [{name: x, ip: a, overhead: 1us}, {name: y, ip: b}, {name: z, ip: c}]
      edges:
        - {from: ingress, to: x, alpha: 1}
        - {from: x, to: y, alpha: 1}
        - {from: y, to: z, alpha: 1}
        - {from: z, to: egress, alpha: 1}
traffic: {ingress: 9Gbit/s, size: 1500B}
`)
	for b.Loop() {
		if _, err := Run(context.Background(), n, Options{Packets: 1000000, Warmup: 0, Seed: 1}); err != nil {
			b.Fatal(err)
		}
	}
}
