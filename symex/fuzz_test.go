package symex

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/dpperf/dpperf/bpfprog"
	"github.com/dpperf/dpperf/cfg"
	"github.com/dpperf/dpperf/internal/testobj"
	"github.com/dpperf/dpperf/interp"
	"github.com/dpperf/dpperf/interp/inputs"
	"github.com/dpperf/dpperf/mapstate"
	"github.com/dpperf/dpperf/smt"
)

// FuzzNoFeasiblePathRefuted is the soundness property of the symbolic
// executor: a path that some packet takes (run by the interpreter, on a
// map state of random entries, the same for every packet) is never refuted, neither by the solver nor by folding.
// A refuted path would let a bound skip a path packets really take.
// Inputs are packets; the programs are flowtable (IPv4/IPv6, TCP/UDP, an
// LRU hash of flows) and xdpfilt_alw_all from libxdp1 (every header
// xdp-filter parses, IPv6 extension headers included).
func FuzzNoFeasiblePathRefuted(f *testing.F) {
	for _, p := range inputs.Packets(3, 40) {
		f.Add(p)
	}
	type subject struct {
		name   string
		vm     *interp.Interp
		maps   func() (*interp.Maps, error)
		pather *cfg.Pather
		check  *Checker
	}
	var subjects []subject
	for _, file := range []string{testobj.Built(f, "flowtable"), filepath.Join(testobj.LibXDPDir, "xdpfilt_alw_all.o")} {
		p, err := bpfprog.LoadFile(file, "")
		if err != nil {
			f.Fatal(err)
		}
		g, err := cfg.Build(p, cfg.Options{})
		if err != nil {
			f.Fatal(err)
		}
		def, err := mapstate.ObjectDefaults(p)
		if err != nil {
			f.Fatal(err)
		}
		flags, err := interp.ObjectMapFlags(p)
		if err != nil {
			f.Fatal(err)
		}
		start := mapstate.Overlay(def, inputs.StartState(p, 3))
		maps := func() (*interp.Maps, error) {
			return interp.NewMaps(p, start, interp.MapOptions{NumCPU: 2, Flags: flags})
		}
		if _, err := maps(); err != nil {
			f.Fatal(err)
		}
		vm, err := interp.New(p, interp.Options{})
		if err != nil {
			f.Fatal(err)
		}
		c, err := NewChecker(g, Options{MinPacket: 14, Solver: smt.Config{Timeout: 5 * time.Second}})
		if err != nil {
			f.Fatal(err)
		}
		f.Cleanup(func() { c.Close() })
		subjects = append(subjects, subject{filepath.Base(file), vm, maps, cfg.NewPather(g), c})
	}
	f.Fuzz(func(t *testing.T, pkt []byte) {
		if len(pkt) < 14 || len(pkt) > 1514 {
			return // the kernel hands XDP at least an Ethernet header
		}
		for _, s := range subjects {
			// Fresh maps for each packet, so that a failure reproduces
			// from its input alone.
			maps, err := s.maps()
			if err != nil {
				t.Fatal(err)
			}
			res, err := s.vm.Run(interp.Input{Packet: pkt, Ifindex: 1}, maps)
			if err != nil {
				t.Fatalf("%s: interpreter: %v", s.name, err)
			}
			edges, err := s.pather.Path(res.Path)
			if err != nil {
				t.Fatalf("%s: %v", s.name, err)
			}
			out, err := s.check.Check(context.Background(), edges)
			if err != nil {
				t.Fatalf("%s: %v", s.name, err)
			}
			if out.Result == smt.Unsat {
				t.Fatalf("%s: the packet's path (%d instructions, verdict %d) refuted at prefix %d of %d edges",
					s.name, res.Count, res.Verdict, out.Prefix, len(edges))
			}
		}
	})
}
