package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

// TestInterfacePprof: interface --pprof writes one sample per class of
// the printed interface, and with --trace counts the trace's priced
// packets.
func TestInterfacePprof(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "flowtable.pprof")
	out, errs, code := dpperf(t, "interface", "--resolution", "10", "--pprof", file, built(t, "flowtable"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	p := readProfile(t, file)
	if classes := strings.Count(out, "return "); len(p.Sample) != classes {
		t.Errorf("%d samples for %d classes printed", len(p.Sample), classes)
	}
	file = filepath.Join(dir, "trace.pprof")
	if _, errs, code = dpperf(t, "interface", "--resolution", "10", "--trace", mixedPcap, "--pprof", file, built(t, "flowtable")); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	p = readProfile(t, file)
	packets := int64(0)
	for _, s := range p.Sample {
		packets += s.Value[1]
	}
	if len(p.SampleType) != 2 || p.SampleType[1].Type != "packets" || packets != 852 {
		t.Errorf("sample types %v, %d packets; want 852 of mixed.pcap's frames priced", p.SampleType, packets)
	}
}

func readProfile(t *testing.T, file string) *profile.Profile {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return p
}
