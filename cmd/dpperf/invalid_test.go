package main

import (
	"bytes"
	"debug/elf"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// mutate writes a copy of a built object with the instruction at index
// insn of section sec replaced by raw (8 bytes).
func mutate(t *testing.T, obj, sec string, insn int, raw []byte) string {
	t.Helper()
	data, err := os.ReadFile(obj)
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	s := f.Section(sec)
	if s == nil {
		t.Fatalf("%s has no section %s", obj, sec)
	}
	copy(data[int(s.Offset)+8*insn:], raw)
	out := filepath.Join(t.TempDir(), "mutated.o")
	if err := os.WriteFile(out, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// Mutated objects the kernel would refuse are input errors on one line
// (exit 2) naming the object, the program and the instruction, from every
// command that reads programs; none of them panics.
func TestInvalidProgramsAreInputErrors(t *testing.T) {
	fig2 := built(t, "fig2")
	cases := []struct {
		name string
		insn int
		raw  []byte
		want string
	}{
		// fig2's "r1 = 0" as a 64-bit MOV of an immediate with 0xe000 in
		// its offset field.
		{"reserved offset", 2, []byte{0xb7, 0x01, 0x00, 0xe0, 0, 0, 0, 0}, "insn 2 (fig2.c:"},
		// "r2 = *(u8 *)(r6 + 12)" reading through r0, which holds 1.
		{"read through a number", 9, []byte{0x71, 0x02, 0x0c, 0x00, 0, 0, 0, 0}, "insn 9 (fig2.c:"},
	}
	for _, c := range cases {
		obj := mutate(t, fig2, "xdp", c.insn, c.raw)
		for _, args := range [][]string{
			{"bound", "--target", "x86-64", obj},
			{"bound", "--naive", "--target", "x86-64", obj},
			{"bound", "--target", "nfp-agilio-cx", obj},
			{"interface", obj},
		} {
			_, errs, code := dpperf(t, args...)
			cmd := c.name + ": dpperf " + strings.Join(args[:len(args)-1], " ")
			if c.name == "read through a number" && args[1] == "--naive" {
				// The naive bound executes nothing symbolically: the
				// program's encoding is valid, so it is priced.
				if code != 0 {
					t.Errorf("%s: exit %d, stderr %q", cmd, code, errs)
				}
				continue
			}
			if code != 2 || !strings.HasPrefix(errs, "dpperf: "+obj+": program fig2, "+c.want) {
				t.Errorf("%s: exit %d, stderr %q; want exit 2 naming %s", cmd, code, errs, c.want)
			}
			if n := strings.Count(strings.TrimSpace(errs), "\n"); n > 0 {
				t.Errorf("%s: error is not one line: %q", cmd, errs)
			}
		}
	}
}
