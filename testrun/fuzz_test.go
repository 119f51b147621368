package testrun_test

import (
	"testing"

	"github.com/dpperf/dpperf/bpfprog"
	"github.com/dpperf/dpperf/interp"
	"github.com/dpperf/dpperf/interp/inputs"
)

// FuzzKernel is the kernel-comparison form of the interpreter's fuzz test:
// on every packet it is given, each program's verdict and output packet in
// the interpreter equal BPF_PROG_TEST_RUN's. Seeds are in
// testdata/fuzz/FuzzKernel plus generated packets.
func FuzzKernel(f *testing.F) {
	for _, pkt := range inputs.Packets(6, 30) {
		f.Add(pkt)
	}
	var pairs []*pair
	for _, file := range objects(f) {
		ps, err := bpfprog.XDPPrograms(file)
		if err != nil {
			f.Fatal(err)
		}
		for _, p := range ps {
			if !verifierRejects(p.Name) {
				pairs = append(pairs, newPair(f, p, inputs.StartState(p, 6)))
			}
		}
	}
	f.Fuzz(func(t *testing.T, pkt []byte) {
		if len(pkt) < interp.MinPacket || len(pkt) > interp.MaxPacket {
			return // BPF_PROG_TEST_RUN refuses them
		}
		for _, pr := range pairs {
			if _, err := pr.run(pkt); err != nil {
				t.Fatalf("%s %s: %v", pr.prog.File, pr.prog.Name, err)
			}
		}
	})
}
