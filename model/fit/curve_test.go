package fit

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadCSV(t *testing.T) {
	f, _ := os.Open("testdata/curve.csv")
	defer f.Close()
	pts, err := ReadCSV(f, "curve.csv", 4096)
	if err != nil {
		t.Fatal(err)
	}
	if len(pts) != 4 || pts[1] != (Point{Load: 200e6, Latency: 34e-6, Size: 4096}) {
		t.Errorf("%+v", pts)
	}
	g, _ := os.Open("testdata/iops.csv")
	defer g.Close()
	pts, err = ReadCSV(g, "iops.csv", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(pts) != 2 || pts[1].Load != 50000*4096 || pts[1].Size != 4096 {
		t.Errorf("%+v", pts)
	}
}

func TestReadCSVErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", "header"},
		{"load,latency\n", "no measurements"},
		{"load,colour\n1GB/s,1us\n", "unknown column"},
		{"latency\n1us\n", "want columns"},
		{"load,iops,latency\n", "want columns"},
		{"load,latency\n1GB/s,1\n", "x.csv:2: latency"},
		{"load,latency\n1GB/s,1us\n-1GB/s,2us\n", "x.csv:3: load"},
		{"iops,latency\nfast,1us\n", "iops: want a positive number"},
		{"load,latency\n1GB/s,1us,3\n", "wrong number of fields"},
	} {
		_, err := ReadCSV(strings.NewReader(c.in), "x.csv", 4096)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.in, err, c.want)
		}
	}
	if _, err := ReadCSV(strings.NewReader("load,latency\n1GB/s,1us\n"), "x.csv", 0); err == nil {
		t.Error("no size accepted")
	}
}

// The committed fio run of the opaque-SSD example: one point per iodepth.
func TestReadFio(t *testing.T) {
	f, err := os.Open("../../examples/model/opaque-ssd/fio.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pts, err := ReadFio(f, "fio.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(pts) != 8 {
		t.Fatalf("%d points", len(pts))
	}
	for i, p := range pts {
		// Little's law for a closed loop of iodepth requests.
		depth := math.Pow(2, float64(i))
		if math.Abs(p.Size-4096) > 4 || math.Abs(p.Load/p.Size*p.Latency/depth-1) > 0.1 {
			t.Errorf("job %d: %+v (Little: %g in flight)", i, p, p.Load/p.Size*p.Latency)
		}
	}
}

func TestReadFioErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", "no JSON"},
		{"{", "fio JSON"},
		{`{"jobs": []}`, "no fio jobs"},
		{`{"jobs": [{"jobname": "a", "read": {"iops": 0}}]}`, "no reads or writes"},
		{`fio: warning\n{"jobs": [{"jobname": "a", "read": {"bw_bytes": 4096, "iops": 1, "lat_ns": {"mean": 1000}}}]}`, ""},
	} {
		_, err := ReadFio(strings.NewReader(c.in), "f.json")
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%q: %v, want %q", c.in, err, c.want)
		}
	}
}

func FuzzReadCSV(f *testing.F) {
	for _, name := range []string{"curve.csv", "iops.csv"} {
		b, _ := os.ReadFile(filepath.Join("testdata", name))
		f.Add(string(b))
	}
	f.Fuzz(func(t *testing.T, s string) {
		pts, err := ReadCSV(strings.NewReader(s), "f.csv", 4096)
		for _, p := range pts {
			if err == nil && !finite(p) {
				t.Fatalf("%q: bad point %+v", s, p)
			}
		}
	})
}

// finite reports a point whose every field is a positive finite number.
func finite(p Point) bool {
	for _, v := range []float64{p.Load, p.Latency, p.Size} {
		if !(v > 0) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}

func FuzzReadFio(f *testing.F) {
	f.Add(`{"jobs": [{"jobname": "a", "read": {"bw_bytes": 4096, "iops": 1, "lat_ns": {"mean": 1000}}}]}`)
	f.Add(`{"jobs": [{"jobname": "a", "read": {"iops": 0}, "write": {"bw_bytes": 1, "iops": 2, "lat_ns": {"mean": 3}}}]}`)
	f.Fuzz(func(t *testing.T, s string) {
		pts, err := ReadFio(strings.NewReader(s), "f.json")
		for _, p := range pts {
			if err == nil && !finite(p) {
				t.Fatalf("%q: bad point %+v", s, p)
			}
		}
	})
}
