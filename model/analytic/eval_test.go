package analytic

import (
	"math"
	"strings"
	"testing"

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

func approx(t *testing.T, what string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > 1e-9*math.Max(1e-12, math.Abs(want)) {
		t.Errorf("%s = %.12g, want %.12g", what, got, want)
	}
}

// One IP of 8 Gbit/s (1e9 B/s), one engine, unbounded queue, 1000 B
// packets at 4 Gbit/s: ρ = 0.5, service 1 µs, wait 1 µs, and two edges of
// 1000 B over a 80 Gbit/s (1e10 B/s) interface add 0.2 µs.
const single = `
hardware:
  interface: 80Gbit/s
  ips: [{name: a, throughput: 8Gbit/s}]
software:
  graphs:
    - name: g
      vertices: [{name: v, ip: a, overhead: 5us}]
      edges: [{from: ingress, to: v, alpha: 1}, {from: v, to: egress, alpha: 1}]
traffic: {ingress: 4Gbit/s, size: 1000B}
`

func TestSingle(t *testing.T) {
	r := Evaluate(compile(t, single))
	approx(t, "throughput", float64(r.Throughput), 1e9)
	if r.Bottleneck != "ip:a" {
		t.Errorf("bottleneck %q", r.Bottleneck)
	}
	// Overhead O is not charged on the edge to egress (eq. 6).
	approx(t, "latency", float64(r.Latency), 2.2e-6)
	approx(t, "rho", float64(r.Stations[0].Rho), 0.5)
	approx(t, "mean in system", float64(r.Stations[0].Mean), 1)
	approx(t, "drops", float64(r.DropShare), 0)
	// Interface: 2 bytes per ingress byte over 1e10 B/s.
	for _, c := range r.Components {
		if c.Name == "interface" {
			approx(t, "interface capacity", float64(c.Capacity), 5e9)
			approx(t, "interface headroom", float64(c.Headroom), 0.8)
		}
	}
}

// Equation 4 with every kind of constraint; each case shrinks one
// resource until it binds.
func TestThroughputBinding(t *testing.T) {
	base := `
hardware:
  ingress: {ports: 2, rate: %ING%}
  egress: {rate: %EGR%}
  interface: %INTF%
  memory: %MEM%
  ips:
    - {name: a, throughput: %A%, parallelism: 4}
    - {name: b, throughput: 80Gbit/s, rate-limit: %LIM%}
  links: [{between: [a, b], bandwidth: %LINK%}]
software:
  graphs:
    - name: g
      vertices: [{name: v, ip: a}, {name: w, ip: b}]
      edges:
        - {from: ingress, to: v, delta: 1, alpha: 1}
        - {from: v, to: w, delta: 2, alpha: 2, beta: 4}
        - {from: w, to: egress, delta: 0.5}
traffic: {ingress: 1Gbit/s, size: 1500B}
`
	def := map[string]string{"%ING%": "400Gbit/s", "%EGR%": "400Gbit/s", "%INTF%": "400Gbit/s", "%MEM%": "800Gbit/s",
		"%A%": "800Gbit/s", "%LIM%": "800Gbit/s", "%LINK%": "800Gbit/s"}
	cases := []struct {
		key, val, bottleneck string
		want                 float64 // Gbit/s
	}{
		{"%A%", "10Gbit/s", "ip:a", 10},         // P/Σδ = 10/1
		{"%LIM%", "10Gbit/s", "limiter:b", 5},   // R/Σδ = 10/2
		{"%LINK%", "10Gbit/s", "link:a-b", 5},   // BW/δ = 10/2
		{"%INTF%", "30Gbit/s", "interface", 10}, // BW/Σα = 30/3
		{"%MEM%", "20Gbit/s", "memory", 5},      // BW/Σβ = 20/4
		{"%ING%", "3Gbit/s", "ingress", 6},      // 2 ports × 3
		{"%EGR%", "2Gbit/s", "egress", 4},       // BW/δ = 2/0.5
	}
	for _, c := range cases {
		y := base
		for k, v := range def {
			if k == c.key {
				v = c.val
			}
			y = strings.ReplaceAll(y, k, v)
		}
		r := Evaluate(compile(t, y))
		if r.Bottleneck != c.bottleneck {
			t.Errorf("%s=%s: bottleneck %q, want %q", c.key, c.val, r.Bottleneck, c.bottleneck)
		}
		approx(t, c.key+" throughput", float64(r.Throughput)*8/1e9, c.want)
		for _, comp := range r.Components {
			if float64(comp.Headroom) < -1e-12 || comp.Binding != (comp.Name == c.bottleneck) {
				t.Errorf("%s: component %+v", c.key, comp)
			}
		}
	}
}

// A fan-out splits the bytes 1:3; paths are weighted by their share (eq. 8)
// and each branch's IP sees only its share of the bytes.
func TestFanOut(t *testing.T) {
	y := `
hardware:
  ips:
    - {name: a, throughput: 8Gbit/s}
    - {name: b, throughput: 8Gbit/s}
    - {name: c, throughput: 8Gbit/s}
software:
  graphs:
    - name: g
      vertices: [{name: x, ip: a, overhead: 1us}, {name: y, ip: b}, {name: z, ip: c}]
      edges:
        - {from: ingress, to: x}
        - {from: x, to: y, delta: 0.25}
        - {from: x, to: z, delta: 0.75}
        - {from: y, to: egress, delta: 0.25}
        - {from: z, to: egress, delta: 0.75}
traffic: {ingress: 4Gbit/s, size: 1000B}
`
	r := Evaluate(compile(t, y))
	approx(t, "throughput", float64(r.Throughput), 1e9)
	// x: ρ .5, s 1µs → 2µs. y: ρ .125, s .25µs → .25/(1-.125) µs.
	// z: ρ .375, s .75µs → .75/(1-.375) = 1.2 µs. Overhead 1 µs on both.
	want := 2e-6 + 1e-6 + 0.25*(0.25e-6/0.875) + 0.75*1.2e-6
	approx(t, "latency", float64(r.Latency), want)
	approx(t, "critical path", float64(r.Classes[0].Critical), 2e-6+1e-6+1.2e-6)
}

// Two graphs share a pooled IP; a packet-size mix is two classes whose
// byte weights come from the packet shares.
func TestSharingAndSizes(t *testing.T) {
	y := `
hardware:
  ips:
    - {name: a, throughput: 8Gbit/s}
    - {name: b, throughput: 8Gbit/s}
software:
  graphs:
    - name: g1
      weight: 3
      vertices: [{name: v, ip: a}]
      edges: [{from: ingress, to: v}, {from: v, to: egress}]
    - name: g2
      vertices: [{name: v, ip: a}, {name: u, ip: b}]
      edges: [{from: ingress, to: v, delta: 2}, {from: v, to: u}, {from: u, to: egress}]
traffic:
  ingress: 2Gbit/s
  sizes: [{size: 100B, share: 1}, {size: 300B, share: 1}]
`
	n := compile(t, y)
	if len(n.Classes) != 4 {
		t.Fatalf("%d classes", len(n.Classes))
	}
	// Byte shares within a graph: 100:300.
	approx(t, "w(g1,100B)", n.Classes[0].Weight, 0.75*0.25)
	approx(t, "w(g2,300B)", n.Classes[3].Weight, 0.25*0.75)
	r := Evaluate(n)
	// Load on a per ingress byte: 0.75·1 + 0.25·2 = 1.25 → 1e9/1.25.
	approx(t, "throughput", float64(r.Throughput), 0.8e9)
	approx(t, "rho(a)", float64(r.Stations[0].Rho), 0.25e9*1.25/1e9)
	// Mean service time at a, weighted by request rate: g1 classes send
	// 0.75·B/g requests of g bytes, g2 classes 0.25·B/g of 2g bytes.
	B := 0.25e9
	var lam, work float64
	for _, c := range []struct{ w, g, d float64 }{{0.75 * 0.25, 100, 1}, {0.75 * 0.75, 300, 1}, {0.25 * 0.25, 100, 2}, {0.25 * 0.75, 300, 2}} {
		l := c.w * B / c.g
		lam += l
		work += l * c.g * c.d / 1e9
	}
	approx(t, "service(a)", float64(r.Stations[0].Service), work/lam)
}

// Partitions: a reserved vertex gets γ of the IP and its own queue.
func TestPartition(t *testing.T) {
	y := `
hardware:
  ips: [{name: a, throughput: 8Gbit/s, parallelism: 4, queue: 4}]
software:
  graphs:
    - name: g
      vertices: [{name: v, ip: a, partition: 0.25, queue: 2}, {name: w, ip: a}]
      edges: [{from: ingress, to: v}, {from: v, to: w}, {from: w, to: egress}]
traffic: {ingress: 1.6Gbit/s, size: 1000B}
`
	r := Evaluate(compile(t, y))
	approx(t, "throughput", float64(r.Throughput), 0.25e9) // v: 0.25·1e9
	s, pool := r.Stations[0], r.Stations[1]
	if s.Name != "a/g.v" || float64(s.Engines) != 1 || float64(s.Queue) != 2 {
		t.Fatalf("station %+v", s)
	}
	// ρ = 0.2e9/0.25e9 = 0.8; N = 2: P_N = ρ²(1-ρ)/(1-ρ³), wait = s·(ρ/(1-ρ) - 2ρ²/(1-ρ²)).
	rho := 0.8
	approx(t, "rho", float64(s.Rho), rho)
	approx(t, "drop", float64(s.Drop), rho*rho*(1-rho)/(1-rho*rho*rho))
	approx(t, "service", float64(s.Service), 4e-6)
	approx(t, "wait", float64(s.Wait), 4e-6*(rho/(1-rho)-2*rho*rho/(1-rho*rho)))
	approx(t, "pool engines", float64(pool.Engines), 3)
	approx(t, "pool rho", float64(pool.Rho), 0.2e9/0.75e9)
}

// Property: throughput does not depend on the offered load, latency and
// drops grow with it, and a bigger bottleneck never lowers throughput.
func TestMonotoneInLoad(t *testing.T) {
	n := compile(t, single)
	e := NewEvaluator(n)
	prevL, prevD := 0.0, 0.0
	for b := 0.05e9; b < 2e9; b += 0.05e9 {
		n.Offered = b
		thr, _ := e.Throughput()
		approx(t, "throughput", thr, 1e9)
		l, d, _ := e.Latency()
		if l < prevL || d < prevD {
			t.Fatalf("latency/drops fell at %v", b)
		}
		prevL, prevD = l, d
	}
	if !math.IsInf(prevL, 1) {
		t.Errorf("unbounded queue past saturation: latency %v, want +Inf", prevL)
	}
}

func BenchmarkEvaluate10(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("hardware:\n  interface: 100Gbit/s\n  memory: 200Gbit/s\n  ips:\n")
	for i := 0; i < 10; i++ {
		sb.WriteString("    - {name: ip" + string(rune('0'+i)) + ", throughput: 40Gbit/s, parallelism: 4, queue: 16}\n")
	}
	sb.WriteString("software:\n  graphs:\n    - name: g\n      vertices:\n")
	for i := 0; i < 10; i++ {
		sb.WriteString("        - {name: v" + string(rune('0'+i)) + ", ip: ip" + string(rune('0'+i)) + ", overhead: 1us}\n")
	}
	sb.WriteString("      edges:\n        - {from: ingress, to: v0, alpha: 1}\n")
	for i := 0; i < 9; i++ {
		sb.WriteString("        - {from: v" + string(rune('0'+i)) + ", to: v" + string(rune('1'+i)) + ", alpha: 1, beta: 0.5}\n")
	}
	sb.WriteString("        - {from: v9, to: egress, alpha: 1}\ntraffic: {ingress: 10Gbit/s, size: 1500B}\n")
	n := compile(b, sb.String())
	e := NewEvaluator(n)
	b.ReportAllocs()
	for b.Loop() {
		e.Throughput()
		e.Latency()
	}
}
