package program

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dpperf/dpperf/model/flow"
	"github.com/dpperf/dpperf/model/spec"
)

const example = "../../examples/model/xdp-countmin"

// TestReadBoundExample reads the bundled bound: countmin on
// nfp-agilio-cx, 908 core cycles on the slowest path, 40e9 cycles/s over
// all cores.
func TestReadBoundExample(t *testing.T) {
	f, err := os.Open(filepath.Join(example, "countmin.bound.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := ReadBound(f, "countmin.bound.json")
	if err != nil {
		t.Fatal(err)
	}
	if b.Program != "countmin" || b.Target != "nfp-agilio-cx" || b.Bottleneck != "cores" || b.Kind != "ssp" {
		t.Errorf("got %+v", b)
	}
	if want := b.Capacity("cores") / b.Cost["cores"]; math.Abs(b.PathRate-want) > 1e-6*want {
		t.Errorf("path rate %v, capacity/cost %v", b.PathRate, want)
	}
}

// TestResolveExample: the stage gets 50 engines / 44.05 Mpps = 1.135 µs
// per packet, and the compiled station serves 16 cores' worth.
func TestResolveExample(t *testing.T) {
	s, err := spec.Load(filepath.Join(example, "spec.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := flow.Compile(s); err == nil || !strings.Contains(err.Error(), "not resolved") {
		t.Errorf("compiling an unresolved program stage: %v", err)
	}
	st, err := Resolve(context.Background(), s, example, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(st) != 1 || st[0].Vertex != "xdp.count" || st[0].Engines != 50 || st[0].How != "worst case" {
		t.Fatalf("stages %+v", st)
	}
	want := 50 / 44052863.43612335
	if got := s.Graphs[0].Vertices[0].Service; math.Abs(got-want) > 1e-12 {
		t.Errorf("service %v, want %v", got, want)
	}
	n, err := flow.Compile(s)
	if err != nil {
		t.Fatal(err)
	}
	c := n.Classes[0]
	if got, want := n.StationRate(&c, 2), 16*c.Size/want; math.Abs(got-want) > 1e-6*want {
		t.Errorf("station rate %v, want %v", got, want)
	}
}

func TestReadBoundErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{}`, `schema: want "dpperf.bound/v1"`},
		{`{"schema": "dpperf.bound/v1"}`, "bound: missing"},
		{`{"schema": "dpperf.bound/v1", "bound": {"path_rate": -1}}`, "bound.path_rate: want a positive"},
		{`[`, "bound json"},
	} {
		_, err := ReadBound(strings.NewReader(c.in), "f.json")
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "f.json: ") {
			t.Errorf("%s: got %v, want %q", c.in, err, c.want)
		}
	}
}

func TestResolveErrors(t *testing.T) {
	dir := t.TempDir()
	spec1 := func(prog string) *spec.Spec {
		y := `hardware: {ips: [{name: c, parallelism: 4}]}
software: {graphs: [{name: g, vertices: [{name: v, ip: c, program: ` + prog + `}], edges: [{from: ingress, to: v}, {from: v, to: egress}]}]}
traffic: {ingress: 1Gbit/s, size: 64B}`
		s, err := spec.Read(strings.NewReader(y), "s.yaml")
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	os.WriteFile(filepath.Join(dir, "bad.json"), []byte(`{"schema": "x"}`), 0o644)
	for _, c := range []struct{ prog, want string }{
		{"{bound: none.json}", "software.graphs[0].vertices[0].program: bound: read"},
		{"{bound: bad.json}", "bad.json: schema"},
		{"{object: none.o}", "program: object: read"},
	} {
		_, err := Resolve(context.Background(), spec1(c.prog), dir, Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.prog, err, c.want)
		}
	}
}

// FuzzReadBound: any input gives a bound with a positive finite rate or
// an error naming the file.
func FuzzReadBound(f *testing.F) {
	for _, name := range []string{"testdata/bound-min.json", filepath.Join(example, "countmin.bound.json")} {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := ReadBound(strings.NewReader(string(data)), "f")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f: ") {
				t.Errorf("error %q does not name the file", err)
			}
			return
		}
		if !(b.PathRate > 0) || math.IsInf(b.PathRate, 0) {
			t.Errorf("rate %v", b.PathRate)
		}
	})
}
