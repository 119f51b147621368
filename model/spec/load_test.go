package spec

import (
	"bufio"
	"bytes"
	"math"
	"os"
	"path/filepath"
	"reflect"
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

// roundTrip reads b for editing, writes it and reads it again: the
// specification must be the one read from b, but for its line numbers.
func roundTrip(t *testing.T, b []byte, s *Spec) {
	t.Helper()
	d, err := ReadDoc(b, "in.yml")
	if err != nil {
		t.Fatalf("Read accepts what ReadDoc rejects: %v", err)
	}
	out, err := d.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	s2, err := Read(bytes.NewReader(out), "in.yml")
	if err != nil {
		t.Fatalf("written file does not read: %v\n%s", err, out)
	}
	if !sameBesideLines(reflect.ValueOf(s), reflect.ValueOf(s2)) {
		t.Fatalf("round trip changed the specification:\n%+v\nwritten:\n%s\nread back:\n%+v", s, out, s2)
	}
}

// sameBesideLines compares two values as reflect.DeepEqual does, but
// with NaN equal to NaN and fields named Line ignored.
func sameBesideLines(a, b reflect.Value) bool {
	switch a.Kind() {
	case reflect.Float64:
		x, y := a.Float(), b.Float()
		return x == y || math.IsNaN(x) && math.IsNaN(y)
	case reflect.Pointer:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		return sameBesideLines(a.Elem(), b.Elem())
	case reflect.Slice:
		if a.Len() != b.Len() {
			return false
		}
		for i := range a.Len() {
			if !sameBesideLines(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Struct:
		for i := range a.NumField() {
			if a.Type().Field(i).Name != "Line" && !sameBesideLines(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a.Interface(), b.Interface())
}

// TestRoundTrip: the good specifications and the examples read back as
// they were read.
func TestRoundTrip(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.good.yml")
	examples, _ := filepath.Glob("../../examples/model/*/spec.yaml")
	for _, p := range append(files, examples...) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		s, err := Read(bytes.NewReader(b), p)
		if err != nil {
			t.Fatal(err)
		}
		roundTrip(t, b, s)
	}
}

// FuzzRead: whatever reads has graphs and IPs and, written, reads back
// the same.
func FuzzRead(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.yml")
	for _, p := range files {
		b, _ := os.ReadFile(p)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := Read(bytes.NewReader(b), "in.yml")
		if err != nil {
			return
		}
		if len(s.Graphs) == 0 || len(s.Hardware.IPs) == 0 {
			t.Fatal("accepted a spec without graphs or IPs")
		}
		roundTrip(t, b, s)
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
