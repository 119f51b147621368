package bound

import (
	"bytes"
	"context"
	"debug/elf"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/dpperf/dpperf/bpfprog"
	"github.com/dpperf/dpperf/cfg"
	"github.com/dpperf/dpperf/internal/fail"
	"github.com/dpperf/dpperf/internal/testobj"
	"github.com/dpperf/dpperf/symex"
	"github.com/dpperf/dpperf/target"
)

// FuzzObject takes object bytes through every step of the analyses that
// needs no solver: loading with the kernel's encoding and map checks, the
// graph, the naive bound under the x86-64 and the NFP target (its JIT
// translation), and the symbolic execution of the slowest paths into SMT
// text. Whatever the bytes: no panic, and every error is an input error
// (exit 2) unless the graph grew past its (lowered) size limit.
// Seeds: the small bundled examples and libxdp's filters.
func FuzzObject(f *testing.F) {
	for _, name := range objectSeeds {
		addObject(f, testobj.Built(f, name))
	}
	for _, name := range []string{"xdpfilt_alw_eth.o", "xdpfilt_dny_udp.o", "xdp-dispatcher.o"} {
		addObject(f, filepath.Join(testobj.LibXDPDir, name))
	}
	targets := fuzzTargets(f)
	f.Fuzz(func(t *testing.T, data []byte) { analyseObject(t, targets, data) })
}

// FuzzInstructions overwrites bytes of a seed object's code, so that
// nearly every input reaches the encoding checks, the graph and symbolic
// execution (raw object bytes mostly stop at the ELF reader): seed picks
// the object, at the offset in its first code section, patch the bytes.
func FuzzInstructions(f *testing.F) {
	var objs [][]byte
	var code [][2]int // offset and size of each object's first code section
	for _, name := range objectSeeds {
		data, err := os.ReadFile(testobj.Built(f, name))
		if err != nil {
			f.Fatal(err)
		}
		ef, err := elf.NewFile(bytes.NewReader(data))
		if err != nil {
			f.Fatal(err)
		}
		for _, sec := range ef.Sections {
			if sec.Flags&elf.SHF_EXECINSTR != 0 && sec.Size >= 8 {
				objs, code = append(objs, data), append(code, [2]int{int(sec.Offset), int(sec.Size)})
				break
			}
		}
	}
	f.Add(uint8(0), uint16(16), []byte{0xb7, 0x01, 0x00, 0xe0, 0, 0, 0, 0}) // MOV imm with off 0xe000
	f.Add(uint8(0), uint16(72), []byte{0x71, 0x02, 0x0c, 0x00, 0, 0, 0, 0}) // a read through r0, a number
	f.Add(uint8(3), uint16(40), []byte{0x85, 0, 0, 0, 0xff, 0, 0, 0})       // call of an unknown helper
	targets := fuzzTargets(f)
	f.Fuzz(func(t *testing.T, seed uint8, at uint16, patch []byte) {
		i := int(seed) % len(objs)
		data := append([]byte(nil), objs[i]...)
		off, size := code[i][0], code[i][1]
		copy(data[off+int(at)%size:off+size], patch[:min(len(patch), 64)])
		analyseObject(t, targets, data)
	})
}

// objectSeeds are the bundled examples both targets start from.
var objectSeeds = []string{"fig2", "parser", "counter", "loop", "call", "legacy", "flowtable", "labels", "countmin", "dnscache", "quiclb", "ipv6ext_quic"}

func fuzzTargets(f *testing.F) []*target.Target {
	var targets []*target.Target
	for _, name := range []string{"x86-64", "nfp-agilio-cx"} {
		t, err := target.Load(name)
		if err != nil {
			f.Fatal(err)
		}
		targets = append(targets, t)
	}
	return targets
}

// analyseObject runs the solver-free analyses over every program of the
// object in data.
func analyseObject(t *testing.T, targets []*target.Target, data []byte) {
	o, err := bpfprog.Open(bytes.NewReader(data), "fuzz.o")
	if err != nil {
		inputError(t, "open", err)
		return
	}
	for _, e := range o.Entries {
		p, err := o.Program(bpfprog.Options{Program: e.Name})
		if err != nil {
			inputError(t, "program", err)
			continue
		}
		g, err := cfg.BuildContext(context.Background(), p, cfg.Options{MaxNodes: 20_000, MaxTrips: 64})
		if errors.Is(err, cfg.ErrTooLarge) {
			continue
		}
		if err != nil {
			inputError(t, "graph", err)
			continue
		}
		for _, tg := range targets {
			o, err := NewOrdered(Cost(g, tg))
			if err != nil {
				t.Fatalf("%s: order: %v", tg.Name, err)
			}
			for range 3 {
				path, ok := o.Next()
				if !ok {
					break
				}
				_, _, err := symex.Describe(g, symex.Options{}, path.Edges)
				if _, invalid := bpfprog.IsInvalid(err); invalid && fail.ExitCode(err) != fail.ExitInput {
					t.Fatalf("invalid program exits %d: %v", fail.ExitCode(err), err)
				}
			}
		}
	}
}

// inputError fails the test unless err is an input error (exit 2).
func inputError(t *testing.T, step string, err error) {
	t.Helper()
	if code := fail.ExitCode(err); code != fail.ExitInput {
		t.Fatalf("%s: exit %d: %v", step, code, err)
	}
}

func addObject(f *testing.F, path string) {
	b, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
}
