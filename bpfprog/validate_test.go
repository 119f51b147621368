package bpfprog

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/dpperf/dpperf/internal/fail"
	"github.com/dpperf/dpperf/internal/testobj"
)

// Every program of every bundled and libxdp object passes the encoding
// and map checks: the kernel loads them all.
func TestPublishedObjectsAreValid(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(testobj.Root(), "build", "bpf", "*.o"))
	if len(files) < 10 {
		t.Fatalf("%d objects in build/bpf: run 'make bpf' first", len(files))
	}
	files = append(files, testobj.LibXDP(t)...)
	n := 0
	for _, f := range files {
		o, err := OpenFile(f)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		for _, e := range o.Entries {
			if _, err := o.Program(Options{Program: e.Name}); err != nil {
				t.Errorf("%v", err)
			}
			n++
		}
	}
	t.Logf("%d programs of %d objects", n, len(files))
}

func ret0() asm.Instructions {
	return asm.Instructions{asm.Mov.Imm(asm.R0, 2), asm.Return()}
}

// Each encoding the kernel's verifier rejects is an invalid program, an
// input error naming the instruction.
func TestEncodingRejected(t *testing.T) {
	raw := func(op asm.OpCode, dst, src asm.Register, off int16, imm int64) asm.Instruction {
		return asm.Instruction{OpCode: op, Dst: dst, Src: src, Offset: off, Constant: imm}
	}
	cases := []struct {
		name string
		ins  asm.Instruction
		want string
	}{
		{"mov imm with off", raw(asm.Mov.Op(asm.ImmSource), asm.R1, 0, -8192, 1), "reserved fields (off)"},
		{"mov imm with src", raw(asm.Mov.Op(asm.ImmSource), asm.R1, asm.R3, 0, 1), "reserved fields (src"},
		{"add reg with imm", raw(asm.Add.Op(asm.RegSource), asm.R1, asm.R2, 0, 7), "reserved fields (imm"},
		{"shift too far", asm.LSh.Imm32(asm.R1, 32), "shift by an immediate"},
		{"negative shift", asm.RSh.Imm(asm.R1, -1), "shift by an immediate"},
		{"division by zero", asm.Div.Imm(asm.R1, 0), "division by zero"},
		{"write to R10", asm.Mov.Imm(asm.R10, 0), "read-only frame pointer"},
		{"register 11", raw(asm.Mov.Op(asm.RegSource), asm.R1, asm.Register(11), 0, 0), "register number above R10"},
		{"alu op 0xe0", raw(asm.OpCode(asm.ALU64Class)|0xe0, asm.R1, 0, 0, 0), "invalid BPF_ALU operation"},
		{"neg with imm", raw(asm.Neg.Op(asm.ImmSource), asm.R1, 0, 0, 3), "BPF_NEG uses reserved fields"},
		{"bswap width 24", raw(asm.OpCode(asm.ALUClass)|0xd0, asm.R1, 0, 0, 24), "BPF_END uses reserved fields"},
		{"movsx32 in alu32", raw(asm.MovSX32.Op32(asm.RegSource), asm.R1, asm.R2, 0, 0), "BPF_MOVSX"},
		{"ldx with imm", raw(asm.LoadMemOp(asm.Word), asm.R1, asm.R10, -4, 9), "BPF_LDX uses reserved fields"},
		{"ldsx of 8 bytes", raw(asm.LoadMemSXOp(asm.DWord), asm.R1, asm.R10, -8, 0), "MEMSX of 8 bytes"},
		{"st with src", raw(asm.StoreImmOp(asm.Word), asm.R10, asm.R1, -4, 0), "BPF_ST uses reserved fields"},
		{"stx with imm", raw(asm.StoreMemOp(asm.Word), asm.R10, asm.R1, -4, 5), "BPF_STX uses reserved fields"},
		{"atomic op", raw(asm.OpCode(asm.StXClass)|asm.OpCode(asm.AtomicMode)|asm.OpCode(asm.DWord), asm.R10, asm.R1, -8, 0x30), "invalid atomic operation"},
		{"atomic byte", raw(asm.OpCode(asm.StXClass)|asm.OpCode(asm.AtomicMode)|asm.OpCode(asm.Byte), asm.R10, asm.R1, -8, 0), "size other than 4 or 8"},
		{"ld abs in xdp", raw(asm.LoadAbsOp(asm.Word), 0, 0, 0, 12), "not available to XDP"},
		{"unknown helper", asm.BuiltinFunc(999).Call(), "unknown helper"},
		{"helper 0", asm.BuiltinFunc(0).Call(), "unknown helper"},
		{"call with off", raw(asm.OpCode(asm.JumpClass).SetJumpOp(asm.Call), 0, 0, 3, 5), "BPF_CALL uses reserved fields"},
		{"jeq imm with src", raw(asm.JEq.Op(asm.ImmSource), asm.R1, asm.R2, 0, 0), "src with an immediate source"},
		{"jump past the end", raw(asm.JEq.Op(asm.ImmSource), asm.R0, 0, 5, 0), "jump outside the program"},
		{"jump before the start", raw(asm.Ja.Op(asm.ImmSource), 0, 0, -9, 0), "jump outside the program"},
		{"jmp op 0xf0", raw(asm.OpCode(asm.JumpClass)|0xf0, 0, 0, 0, 0), "invalid jump operation"},
		{"exit in jmp32", raw(asm.OpCode(asm.Jump32Class)|0x90, 0, 0, 0, 0), "no call or exit"},
		{"exit with imm", raw(asm.Return().OpCode, 0, 0, 0, 1), "BPF_EXIT uses reserved fields"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			insns := append(asm.Instructions{asm.Mov.Imm(asm.R1, 1), c.ins}, ret0()...)
			_, err := New("t.o", ebpf.XDP, insns, nil)
			checkInvalid(t, err, 1, c.want)
		})
	}
}

func checkInvalid(t *testing.T, err error, insn int, want string) {
	t.Helper()
	ie, ok := IsInvalid(err)
	if !ok {
		t.Fatalf("error %v, want an invalid program", err)
	}
	if ie.Insn != insn || !strings.Contains(err.Error(), want) {
		t.Errorf("error %q (insn %d), want insn %d and %q", err, ie.Insn, insn, want)
	}
	if fail.ExitCode(err) != fail.ExitInput {
		t.Errorf("exit code %d, want %d", fail.ExitCode(err), fail.ExitInput)
	}
	if !strings.HasPrefix(err.Error(), "t.o: program t") || strings.Contains(err.Error(), "\n") {
		t.Errorf("error %q does not name the object and program on one line", err)
	}
	if got := fail.Input("t.o", err); !errors.Is(got, err) || got.Error() != err.Error() {
		t.Errorf("wrapped as input error about the same file: %q", got)
	}
}

// The encodings the kernel accepts pass, the sign-extending and signed
// forms among them.
func TestEncodingAccepted(t *testing.T) {
	insns := asm.Instructions{
		asm.Mov.Imm(asm.R1, 1),
		asm.MovSX8.Reg(asm.R2, asm.R1),
		asm.MovSX16.Reg32(asm.R3, asm.R1),
		asm.SDiv.Imm(asm.R2, 3),
		asm.SMod.Reg32(asm.R3, asm.R1),
		asm.LSh.Imm(asm.R1, 63),
		asm.BSwap(asm.R1, asm.Half),
		asm.HostTo(asm.BE, asm.R1, asm.Word),
		asm.StoreMem(asm.R10, -8, asm.R1, asm.DWord),
		asm.LoadMemSX(asm.R4, asm.R10, -8, asm.Byte),
		asm.Instruction{OpCode: asm.StoreXAddOp(asm.DWord), Dst: asm.R10, Src: asm.R1, Offset: -8},
		asm.LoadImm(asm.R5, 1<<40, asm.DWord),
		{OpCode: asm.JSGT.Op(asm.ImmSource), Dst: asm.R4, Offset: 1, Constant: -1},
		asm.FnKtimeGetNs.Call(),
		asm.Mov.Imm(asm.R0, 2),
		asm.Return(),
	}
	if _, err := New("t.o", ebpf.XDP, insns, nil); err != nil {
		t.Fatal(err)
	}
}

// A function must end in an exit or a jump: control cannot fall off it.
func TestFallsOffTheEnd(t *testing.T) {
	insns := asm.Instructions{asm.Mov.Imm(asm.R0, 2), asm.Mov.Imm(asm.R1, 2)}
	_, err := New("t.o", ebpf.XDP, insns, nil)
	checkInvalid(t, err, 1, "neither an exit nor a jump")
}

// The kernel refuses maps whose sizes break its limits; the analyses
// would otherwise trust them (a 2 GiB key read byte by byte).
func TestMapLimits(t *testing.T) {
	cases := []struct {
		m    Map
		want string
	}{
		{Map{Type: ebpf.Hash, KeySize: 1 << 31, ValueSize: 8, MaxEntries: 16}, "keys over 512 bytes"},
		{Map{Type: ebpf.Hash, KeySize: 4, ValueSize: 0, MaxEntries: 16}, "needs a key, a value"},
		{Map{Type: ebpf.Array, KeySize: 8, ValueSize: 8, MaxEntries: 16}, "4-byte keys"},
		{Map{Type: ebpf.Array, KeySize: 4, ValueSize: 8, MaxEntries: 1 << 30}, "4 GiB"},
		{Map{Type: ebpf.PerCPUArray, KeySize: 4, ValueSize: 40000, MaxEntries: 1}, "per-CPU values over"},
		{Map{Type: ebpf.LPMTrie, KeySize: 8, ValueSize: 8, MaxEntries: 16}, "BPF_F_NO_PREALLOC"},
		{Map{Type: ebpf.LPMTrie, KeySize: 300, ValueSize: 8, MaxEntries: 16, Flags: 1}, "4-byte prefix length"},
		{Map{Type: ebpf.DevMap, KeySize: 4, ValueSize: 12, MaxEntries: 16}, "values of 4 or 8 bytes"},
		{Map{Type: ebpf.RingBuf, MaxEntries: 5000}, "power of 2"},
		{Map{Type: ebpf.MapType(200), KeySize: 4, ValueSize: 4, MaxEntries: 1}, "unknown map type 200"},
	}
	for _, c := range cases {
		t.Run(c.want, func(t *testing.T) {
			m := c.m
			m.Name = "m"
			insns := asm.Instructions{asm.LoadMapPtr(asm.R1, 0).WithReference("m"), asm.Mov.Imm(asm.R0, 2), asm.Return()}
			_, err := New("t.o", ebpf.XDP, insns, map[string]*Map{"m": &m})
			checkInvalid(t, err, -1, c.want)
			if !strings.Contains(err.Error(), "map m:") {
				t.Errorf("error %q does not name the map", err)
			}
		})
	}
	ok := Map{Name: "m", Type: ebpf.LPMTrie, KeySize: 8, ValueSize: 8, MaxEntries: 16, Flags: 1}
	insns := asm.Instructions{asm.LoadMapPtr(asm.R1, 0).WithReference("m"), asm.Mov.Imm(asm.R0, 2), asm.Return()}
	if _, err := New("t.o", ebpf.XDP, insns, map[string]*Map{"m": &ok}); err != nil {
		t.Error(err)
	}
}

// JumpTarget counts offsets in raw slots, so a 64-bit immediate load
// between a jump and its target counts twice; a 32-bit JA carries its
// offset in imm; a slot inside a load is no instruction.
func TestJumpTarget(t *testing.T) {
	insns := asm.Instructions{
		{OpCode: asm.JEq.Op(asm.ImmSource), Dst: asm.R1, Offset: 2}, // over the 16-byte load
		asm.LoadImm(asm.R2, 1<<40, asm.DWord),
		{OpCode: asm.OpCode(asm.Jump32Class).SetJumpOp(asm.Ja), Constant: -4}, // back to 0
		{OpCode: asm.JEq.Op(asm.ImmSource), Dst: asm.R1, Offset: -3},          // slot 2: the load's second half
		asm.Return(),
	}
	p := &Program{Name: "t", Insns: insns}
	if err := p.index(nil); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		insn, want int
		raw        int64
		ok         bool
	}{{0, 2, 3, true}, {2, 0, 0, true}, {3, -1, 2, false}} {
		got, raw, ok := p.JumpTarget(c.insn)
		if ok != c.ok || raw != c.raw || ok && got != c.want {
			t.Errorf("insn %d: target %d (slot %d, %v), want %d (slot %d, %v)", c.insn, got, raw, ok, c.want, c.raw, c.ok)
		}
	}
}
