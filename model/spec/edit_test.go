package spec

import (
	"math"
	"os"
	"strings"
	"testing"
)

// Writing a parameter into the file and reading it back gives the same
// specification as Spec.Set, and the rest of the file is kept.
func TestDocSetMatchesSpecSet(t *testing.T) {
	data, err := os.ReadFile("testdata/echo.good.yml")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		p Param
		v float64
	}{
		{"offered", 1.1e9}, {"size", 512}, {"echo.weight", 0.5}, {"echo.submit.parallelism", 5},
		{"echo.submit.partition", 0.3}, {"echo.submit.queue", 8}, {"echo.crypto.overhead", 2.5e-6},
		{"cores.parallelism", 12}, {"md5.queue", 64}, {"md5.throughput", 1.5e9}, {"cores.throughput", 2e9},
	}
	for _, c := range cases {
		t.Run(string(c.p), func(t *testing.T) {
			d, err := ReadDoc(data, "echo.good.yml")
			if err != nil {
				t.Fatal(err)
			}
			want, _ := d.Spec()
			if err := want.Set(c.p, c.v); err != nil {
				t.Fatal(err)
			}
			if err := d.Set(c.p, c.v); err != nil {
				t.Fatal(err)
			}
			out, err := d.Bytes()
			if err != nil {
				t.Fatal(err)
			}
			got, err := Read(strings.NewReader(string(out)), "out.yml")
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if v, _ := got.Get(c.p); math.Abs(v-c.v) > 1e-5*c.v {
				t.Errorf("read back %g, want %g", v, c.v)
			}
			sameSpec(t, got, want)
			if !strings.Contains(string(out), "# Inline accelerator") {
				t.Errorf("comments lost:\n%s", out)
			}
		})
	}
}

func sameSpec(t *testing.T, a, b *Spec) {
	t.Helper()
	near := func(x, y float64) bool { return x == y || math.Abs(x-y) <= 1e-5*math.Abs(y) }
	for i, ip := range a.Hardware.IPs {
		o := b.Hardware.IPs[i]
		if ip.Parallelism != o.Parallelism || !near(ip.Queue, o.Queue) || len(ip.Throughput.Rates) != len(o.Throughput.Rates) {
			t.Errorf("IP %s: %+v, want %+v", ip.Name, ip, o)
			continue
		}
		for k := range ip.Throughput.Rates {
			if !near(ip.Throughput.Rates[k], o.Throughput.Rates[k]) {
				t.Errorf("IP %s throughput %v, want %v", ip.Name, ip.Throughput, o.Throughput)
			}
		}
	}
	for gi, g := range a.Graphs {
		if !near(g.Weight, b.Graphs[gi].Weight) || len(g.Sizes) != len(b.Graphs[gi].Sizes) {
			t.Errorf("graph %s differs", g.Name)
		}
		for vi, v := range g.Vertices {
			o := b.Graphs[gi].Vertices[vi]
			if v.Parallelism != o.Parallelism || !near(v.Partition, o.Partition) || !near(v.Queue, o.Queue) || !near(v.Overhead, o.Overhead) {
				t.Errorf("vertex %s: %+v, want %+v", v.Name, v, o)
			}
		}
	}
	if !near(a.Traffic.Ingress, b.Traffic.Ingress) || len(a.Traffic.Sizes) != len(b.Traffic.Sizes) || !near(a.Traffic.Sizes[0].Size, b.Traffic.Sizes[0].Size) {
		t.Errorf("traffic %+v, want %+v", a.Traffic, b.Traffic)
	}
}

func TestDocSetThroughputAt(t *testing.T) {
	data, _ := os.ReadFile("testdata/echo.good.yml")
	for _, c := range []struct {
		ip         string
		size, rate float64
		points     int
	}{{"md5", 1500, 1.25e9, 2}, {"md5", 512, 0.5e9, 3}, {"md5", 9000, 1.5e9, 3}} {
		d, err := ReadDoc(data, "echo.good.yml")
		if err != nil {
			t.Fatal(err)
		}
		if err := d.SetThroughputAt(c.ip, c.size, c.rate); err != nil {
			t.Fatal(err)
		}
		s, err := d.Spec()
		if err != nil {
			t.Fatal(err)
		}
		cv := s.Hardware.IPs[s.Hardware.IPByName(c.ip)].Throughput
		if got := cv.At(c.size); math.Abs(got-c.rate) > 1e-5*c.rate || len(cv.Sizes) != c.points {
			t.Errorf("%+v: curve %+v", c, cv)
		}
	}
}
