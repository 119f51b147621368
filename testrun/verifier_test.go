package testrun_test

import (
	"bytes"
	"debug/elf"
	"errors"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/cilium/ebpf"

	"github.com/dpperf/dpperf/bpfprog"
	"github.com/dpperf/dpperf/internal/testobj"
)

// The kernel is the judge of the encoding checks: every instruction
// bpfprog rejects in a mutated object, the kernel refuses to load too
// (dpperf is never stricter than the verifier).
// Each mutant overwrites one instruction of a bundled example with
// random bytes or flips bits in it; the mutants bpfprog rejects are loaded
// with the kernel's verifier (as root, BPF_PROG_LOAD).
func TestKernelRefusesWhatWeReject(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	rejected, refused, cleared := 0, 0, 0
	for _, name := range []string{"fig2", "counter", "parser", "flowtable", "loop", "call"} {
		data, err := os.ReadFile(testobj.Built(t, name))
		if err != nil {
			t.Fatal(err)
		}
		off, size := codeSection(t, data)
		for range 120 {
			m := append([]byte(nil), data...)
			at := off + 8*rng.IntN(size/8)
			if rng.IntN(2) == 0 {
				for i := range 8 {
					m[at+i] = byte(rng.Uint32())
				}
			} else {
				m[at+rng.IntN(8)] ^= 1 << rng.IntN(8)
			}
			o, err := bpfprog.Open(bytes.NewReader(m), name+".o")
			if err != nil {
				continue
			}
			for _, e := range o.Entries {
				_, err := o.Program(bpfprog.Options{Program: e.Name})
				ie, ok := bpfprog.IsInvalid(err)
				if !ok || ie.Insn < 0 {
					continue
				}
				if strings.HasPrefix(ie.Msg, "BPF_ALU uses reserved fields (off)") {
					// github.com/cilium/ebpf writes the offset field of
					// ALU instructions from their opcode, so the kernel
					// never sees this one (libbpf would pass it on).
					cleared++
					continue
				}
				rejected++
				spec, err := ebpf.LoadCollectionSpecFromReader(bytes.NewReader(m))
				if err != nil {
					refused++ // the library's own reader refuses it already
					continue
				}
				coll, err := ebpf.NewCollectionWithOptions(spec, ebpf.CollectionOptions{})
				if err == nil {
					coll.Close()
					t.Errorf("%v\n  but the kernel loads it", ie)
					continue
				}
				var ve *ebpf.VerifierError
				if !errors.As(err, &ve) && !errors.Is(err, os.ErrInvalid) {
					t.Logf("%v: the kernel refuses it otherwise: %v", ie, err)
				}
				refused++
			}
		}
	}
	t.Logf("%d mutants rejected by bpfprog, %d of them refused by the kernel; %d with an ALU offset the loader clears", rejected, refused, cleared)
	if rejected < 100 {
		t.Errorf("only %d mutants rejected: the mutations no longer reach the checks", rejected)
	}
}

// codeSection returns the offset and size of the object's first section
// of instructions.
func codeSection(t *testing.T, data []byte) (int, int) {
	t.Helper()
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range f.Sections {
		if s.Flags&elf.SHF_EXECINSTR != 0 && s.Size >= 8 {
			return int(s.Offset), int(s.Size)
		}
	}
	t.Fatal("no code section")
	return 0, 0
}
