package spec

import (
	"bufio"
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestGood(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.good.yml")
	if len(files) == 0 {
		t.Fatal("no good files")
	}
	for _, f := range files {
		if _, err := Load(f); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

func TestEcho(t *testing.T) {
	s, err := Load("testdata/echo.good.yml")
	if err != nil {
		t.Fatal(err)
	}
	if s.Hardware.Ingress != 25e9/8 || s.Hardware.Interface != 50e9/8 {
		t.Errorf("hardware rates %v %v", s.Hardware.Ingress, s.Hardware.Interface)
	}
	if got := s.Hardware.IPs[0].Throughput.At(782); math.Abs(got-(3.2e9+(19.2e9-3.2e9)*(782-64)/(1500-64))/8) > 1 {
		t.Errorf("interpolated throughput %v", got)
	}
	v := s.Graphs[0].Vertices[0]
	if v.Parallelism != 7 || v.Overhead != 1e-6 || Share(&s.Hardware, v) != 7.0/16 {
		t.Errorf("vertex %+v", v)
	}
	if len(s.Graphs[0].Edges) != 4 || s.Graphs[0].Edges[0].Alpha != 1 {
		t.Errorf("edges %+v", s.Graphs[0].Edges)
	}
}

func TestBad(t *testing.T) {
	f, err := os.Open("testdata/errors.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		name, want, _ := strings.Cut(line, ": ")
		n++
		_, err := Load(filepath.Join("testdata", name))
		if err == nil {
			t.Errorf("%s: no error", name)
			continue
		}
		got := strings.TrimPrefix(err.Error(), "testdata/")
		if !strings.Contains(got, want) {
			t.Errorf("%s:\n got %s\nwant %s", name, got, want)
		}
	}
	bad, _ := filepath.Glob("testdata/*.bad.yml")
	if n != len(bad) {
		t.Errorf("errors.txt lists %d files, testdata has %d", n, len(bad))
	}
}

func FuzzRead(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.yml")
	for _, p := range files {
		b, _ := os.ReadFile(p)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := Read(bytes.NewReader(b), "fuzz.yml")
		if err == nil && (len(s.Graphs) == 0 || len(s.Hardware.IPs) == 0) {
			t.Fatal("accepted a spec without graphs or IPs")
		}
	})
}

func TestPlacement(t *testing.T) {
	s, err := Load("testdata/placement.good.yml")
	if err != nil {
		t.Fatal(err)
	}
	v := &s.Graphs[0].Vertices[0]
	if v.IP != "b" || v.Overhead != 2e-6 || len(v.Throughput.Sizes) != 0 {
		t.Errorf("placement 1: %+v", v)
	}
	if err := s.Set("g.v.placement", 0); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Get("g.v.placement"); got != 0 || v.IP != "a" || v.Overhead != 1e-6 || v.Throughput.At(64) != 5e9/8 {
		t.Errorf("placement 0: %+v", v)
	}
	if err := s.Set("g.v.placement", 2); err == nil {
		t.Error("placement 2 of 2 accepted")
	}
}
