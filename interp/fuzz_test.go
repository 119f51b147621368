package interp

import (
	"testing"

	"github.com/dpperf/dpperf/interp/inputs"
)

// FuzzRun runs arbitrary packets through every example program: a run
// returns a result or an error, never panics, and its count is its path's
// length. The seed corpus is in testdata/fuzz/FuzzRun plus generated
// packets.
func FuzzRun(f *testing.F) {
	for _, pkt := range inputs.Packets(5, 40) {
		f.Add(pkt)
	}
	progs := examplePrograms(f, true)
	type env struct {
		it   *Interp
		maps *Maps
	}
	var envs []env
	for _, p := range progs {
		it, maps := setup(f, p, inputs.StartState(p, 5))
		envs = append(envs, env{it, maps})
	}
	f.Fuzz(func(t *testing.T, pkt []byte) {
		for _, e := range envs {
			res, err := e.it.Run(Input{Packet: pkt}, e.maps)
			if err != nil {
				if len(pkt) >= MinPacket && len(pkt) <= MaxPacket {
					t.Fatalf("%s: %v", name(e.it.Program()), err)
				}
				continue
			}
			if res.Count != len(res.Path) || res.Count == 0 {
				t.Fatalf("%s: count %d, path %d", name(e.it.Program()), res.Count, len(res.Path))
			}
		}
	})
}
