package symex

import (
	"context"
	"strings"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/dpperf/dpperf/bpfprog"
	"github.com/dpperf/dpperf/internal/fail"
)

// Programs whose encoding is valid but whose registers hold the wrong
// type for an operation are rejected by the kernel's verifier: the
// checker reports them as invalid input naming the instruction, never as
// its own failure.
func TestWrongTypeIsInvalidProgram(t *testing.T) {
	hash := &bpfprog.Map{Name: "h", Type: ebpf.Hash, KeySize: 4, ValueSize: 8, MaxEntries: 4}
	cases := []struct {
		name  string
		insns asm.Instructions
		insn  int
		want  string
	}{
		{"lookup on a scalar", asm.Instructions{
			asm.Mov.Imm(asm.R1, 5),
			asm.StoreImm(asm.R10, -4, 0, asm.Word),
			asm.Mov.Reg(asm.R2, asm.R10),
			asm.Add.Imm(asm.R2, -4),
			asm.FnMapLookupElem.Call(),
		}, 4, "map lookup on a scalar, not a map"},
		{"read through a scalar", asm.Instructions{
			asm.Mov.Imm(asm.R3, 64),
			asm.LoadMem(asm.R0, asm.R3, 0, asm.Word),
		}, 1, "memory read through a scalar"},
		{"write through a map pointer", asm.Instructions{
			asm.LoadMapPtr(asm.R3, 0).WithReference("h"),
			asm.StoreImm(asm.R3, 0, 1, asm.Word),
		}, 1, "memory write through a map"},
		{"key read past the frame", asm.Instructions{
			asm.LoadMapPtr(asm.R1, 0).WithReference("h"),
			asm.Mov.Reg(asm.R2, asm.R10),
			asm.Add.Imm(asm.R2, -2),
			asm.FnMapLookupElem.Call(),
		}, 3, "outside the 512-byte frame"},
		{"32-bit arithmetic on a pointer", asm.Instructions{
			asm.Mov.Reg(asm.R3, asm.R10),
			asm.Add.Imm32(asm.R3, -8),
		}, 1, "32-bit arithmetic on a stack pointer"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			insns := append(c.insns, asm.Mov.Imm(asm.R0, 2), asm.Return())
			p, err := bpfprog.New("bad.o", ebpf.XDP, insns, map[string]*bpfprog.Map{"h": hash})
			if err != nil {
				t.Fatal(err)
			}
			g := graphFrom(t, p, nil)
			ck, err := NewChecker(g, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer ck.Close()
			paths := allPaths(t, g, 1)
			_, err = ck.Check(context.Background(), paths[0])
			ie, ok := bpfprog.IsInvalid(err)
			if !ok {
				t.Fatalf("error %v, want an invalid program", err)
			}
			if ie.Insn != c.insn || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "bad.o: program bad.o, insn ") {
				t.Errorf("error %q (insn %d), want insn %d and %q", err, ie.Insn, c.insn, c.want)
			}
			if code := fail.ExitCode(err); code != fail.ExitInput {
				t.Errorf("exit code %d, want %d", code, fail.ExitInput)
			}
		})
	}
}
