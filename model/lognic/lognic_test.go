package lognic

import (
	"fmt"
	"math"
	"os"
	"testing"

	"github.com/dpperf/dpperf/model/analytic"
)

func rel(a, b float64) float64 { return math.Abs(a-b) / math.Max(math.Abs(b), 1e-300) }

// Hand computation of §2 of the format note for testdata/nvmeof.yaml.
func TestCompatKnownAnswer(t *testing.T) {
	f, err := Load("testdata/nvmeof.yaml")
	if err != nil {
		t.Fatal(err)
	}
	r, err := Compat(f)
	if err != nil {
		t.Fatal(err)
	}
	// γ̂ = 0.5 for both CPU nodes. Link CPU-SSD carries sub→ssd and
	// ssd→cpl: 3.0/2 = 1.5 GiB/s, the minimum. compute:SSD (2.0) comes
	// before BW:interface (8/4 = 2.0) on the tie.
	wantNames := []string{"BW:CPU-SSD", "compute:SSD(0-ssd)", "BW:interface", "compute:CPU(0-sub)", "compute:CPU(0-cpl)", "BW:memory", "BW:CPU-egress", "BW:CPU-ingress"}
	wantVals := []float64{1.5, 2, 2, 3, 3, 8, 12.5, 12.5}
	if len(r.Candidates) != len(wantNames) {
		t.Fatalf("candidates %+v", r.Candidates)
	}
	for i, c := range r.Candidates {
		if c.Name != wantNames[i] && !(c.Value == 12.5 && wantVals[i] == 12.5) || rel(c.Value, wantVals[i]) > 1e-12 {
			t.Errorf("candidate %d = %+v, want %s %v", i, c, wantNames[i], wantVals[i])
		}
	}
	if r.Throughput != 1.5 {
		t.Errorf("throughput %v", r.Throughput)
	}
	G := 4096.0 / (1 << 30)
	sCPU := G * 2 / 6
	rhoCPU := 1.0 / 3
	latCPU := (rhoCPU/(1-rhoCPU)-16/(math.Pow(rhoCPU, -16)-1))*sCPU + sCPU + 2e-6
	sSSD := G * 8 / 2
	latSSD := (1-64/(math.Pow(0.5, -64)-1))*sSSD + sSSD + 10e-6
	want := 2*latCPU + latSSD + G*(1.0/8+3.0/16+3.0/16+1.0/8)
	if rel(r.Latency, want) > 1e-12 {
		t.Errorf("latency %.15g, want %.15g", r.Latency, want)
	}
}

// The default evaluation of the same file uses the document's equations:
// same throughput here; latency differs by the partition in the service
// time (deviation 4), the overhead of the last IP (deviation 6) and the
// link transfer times of equation 6.
func TestPaperSemantics(t *testing.T) {
	f, err := Load("testdata/nvmeof.yaml")
	if err != nil {
		t.Fatal(err)
	}
	n, err := f.Network()
	if err != nil {
		t.Fatal(err)
	}
	r := analytic.Evaluate(n)
	if rel(float64(r.Throughput), 1.5*GiB) > 1e-12 || r.Bottleneck != "link:CPU-SSD" {
		t.Errorf("throughput %v at %s", float64(r.Throughput), r.Bottleneck)
	}
	G := 4096.0
	sCPU := 2 * G / (6 * GiB * 0.5) // partition scales the service rate
	rho := 1.0 / 3
	wCPU := sCPU * (rho/(1-rho) - 16*math.Pow(rho, 16)/(1-math.Pow(rho, 16)))
	sSSD := 8 * G / (2 * GiB)
	wSSD := sSSD * (1 - 64*math.Pow(0.5, 64)/(1-math.Pow(0.5, 64)))
	// Equation 6 also charges g/BW of the IP-IP links: CPU-ingress and
	// CPU-egress (12.5) once each, CPU-SSD (3.0) twice.
	links := G * (2/12.5 + 2/3.0) / GiB
	want := 2*(wCPU+sCPU) + wSSD + sSSD + 2e-6 + 10e-6 + G*(1.0/8+3.0/16+3.0/16+1.0/8)/GiB + links
	if rel(float64(r.Latency), want) > 1e-9 {
		t.Errorf("latency %.12g, want %.12g", float64(r.Latency), want)
	}
}

func TestDetect(t *testing.T) {
	b, _ := os.ReadFile("testdata/nvmeof.yaml")
	if !Detect(b) {
		t.Error("lognic file not detected")
	}
	b2, _ := os.ReadFile("../../examples/model/echo-accel/spec.yaml")
	if Detect(b2) {
		t.Error("dpperf spec detected as lognic")
	}
}

// roundTrip writes f and parses it again: the file read must be f.
func roundTrip(t *testing.T, f *File) {
	t.Helper()
	b, err := f.YAML()
	if err != nil {
		t.Fatal(err)
	}
	g, err := Parse(b, f.Name)
	if err != nil {
		t.Fatalf("written file does not parse: %v\n%s", err, b)
	}
	// %#v prints NaN as NaN, so absent values compare equal.
	if want, got := fmt.Sprintf("%#v", f), fmt.Sprintf("%#v", g); want != got {
		t.Fatalf("round trip changed the file:\n%s\nwritten:\n%s\nread back:\n%s", want, b, got)
	}
}

// TestYAMLRoundTrip: the shipped files read back as they were read.
func TestYAMLRoundTrip(t *testing.T) {
	for _, p := range []string{"testdata/nvmeof.yaml", "testdata/nvmeof-partial.yaml", "../../examples/model/lognic-format/nvmeof.yaml"} {
		f, err := Load(p)
		if err != nil {
			t.Fatal(err)
		}
		roundTrip(t, f)
	}
}

// FuzzParse: whatever parses, written, parses to the same file, and
// evaluating it does not panic.
func FuzzParse(f *testing.F) {
	for _, p := range []string{"testdata/nvmeof.yaml", "testdata/nvmeof-partial.yaml"} {
		b, _ := os.ReadFile(p)
		f.Add(b)
	}
	f.Add([]byte("hardware: {nodes: {A: }}\nsoftware: []\n"))
	f.Add([]byte("hardware: {nodes: {A-B: , C: }, edges: {C-A-B: 1, A-B-ingress: null}}\nsoftware: [{bandwidth-in: 1, granularity-in: 64, nodes: {ingress: }, edges: {ingress-egress: {total: 1, INTF: 0, DRAM: 0}}}]\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Parse(b, "fuzz.yaml")
		if err != nil {
			return
		}
		roundTrip(t, m)
		if _, err := Compat(m); err != nil {
			return
		}
		_, _ = m.Network()
	})
}

// TestCompatPartial: a node without Q_num and Q_len leaves latency out,
// with the reason, and throughput and bottleneck as for the full file.
func TestCompatPartial(t *testing.T) {
	f, err := Load("testdata/nvmeof-partial.yaml")
	if err != nil {
		t.Fatal(err)
	}
	r, err := Compat(f)
	if err != nil {
		t.Fatal(err)
	}
	if r.Throughput != 1.5 || r.Candidates[0].Name != "BW:CPU-SSD" {
		t.Errorf("throughput %v, bottleneck %s", r.Throughput, r.Candidates[0].Name)
	}
	if !math.IsNaN(r.Latency) || r.CaseLat != nil || r.LatencyUnavailable != "node sub has no Q_num or Q_len, which latency needs" {
		t.Errorf("latency %v %v, unavailable %q", r.Latency, r.CaseLat, r.LatencyUnavailable)
	}
}
