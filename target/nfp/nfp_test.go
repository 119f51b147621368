package nfp

import (
	"math"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/dpperf/dpperf/bpfprog"
)

func prog(t *testing.T, insns asm.Instructions, maps map[string]*bpfprog.Map) *bpfprog.Program {
	t.Helper()
	p, err := bpfprog.New("t", ebpf.XDP, insns, maps)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// The counts below follow jit.c's code paths for each instruction.
func TestSequences(t *testing.T) {
	arr := &bpfprog.Map{Name: "m", Type: ebpf.Array, KeySize: 4, ValueSize: 8, MaxEntries: 16}
	p := prog(t, asm.Instructions{
		asm.Add.Reg(asm.R1, asm.R2),              // 0 add_reg64: add, addc
		asm.Add.Imm(asm.R1, 0x12345),             // 1 add_imm64: immed, add, addc
		asm.Add.Imm32(asm.R3, 1),                 // 2 wrp_alu32_imm, zext skipped: R3 is redefined as 32 bits next
		asm.Mov.Imm32(asm.R3, 7),                 // 3 mov_imm: immed, immed
		asm.Add.Imm32(asm.R3, 1),                 // 4 zext needed: R3 is read as 64 bits next
		asm.Add.Reg(asm.R4, asm.R3),              // 5
		asm.LoadMem(asm.R5, asm.R1, 0, asm.Half), // 6 packet cache init: command, ld_field, zext
		asm.LoadMem(asm.R6, asm.R1, 4, asm.Word), // 7 served by the cache: one move, zext
		asm.Mov.Reg(asm.R2, asm.R10),             // 8
		asm.Add.Imm(asm.R2, -4),                  // 9
		asm.LoadMapPtr(asm.R1, 0),                // 10
		asm.FnMapLookupElem.Call(),               // 11
		asm.Mov.Imm(asm.R0, 2),                   // 12
		asm.Return(),                             // 13
	}, map[string]*bpfprog.Map{"m": arr})
	regions := make([]Region, len(p.Insns))
	regions[6], regions[7] = Packet, Packet
	maps := make([]*bpfprog.Map, len(p.Insns))
	maps[11] = arr
	a := Analyze(p, regions, maps)
	for _, c := range []struct {
		i, insns int
		from     string
		latency  float64
	}{
		{0, 2, "add_reg64", 0},
		{1, 4, "add_imm64", 0},
		{2, 1, "wrp_alu32_imm", 0},
		{3, 2, "mov_imm", 0},
		{4, 2, "wrp_alu32_imm", 0},
		{6, 3, "mem_ldx_data_init_pktcache", LatencySRAM},
		{7, 1, "mem_ldx_data_from_pktcache", 0}, // R6 is never read again: no zext
		{11, 1 + 1 + 1 + 1 + 4, "raw array lookup (paper §4.2)", 0},
		{13, 1, "goto_out", 0},
	} {
		s := a.Insn(c.i)
		if s.Insns != c.insns || s.From != c.from || s.Latency != c.latency {
			t.Errorf("instruction %d (%v): got %d from %s latency %v, want %d from %s latency %v",
				c.i, p.Insns[c.i], s.Insns, s.From, s.Latency, c.insns, c.from, c.latency)
		}
	}
	if s := a.Insn(11); s.DRAMReads != 0 || s.Command {
		t.Errorf("a raw array lookup touches no memory, got %+v", s)
	}
}

// An atomic add of a constant that fits 16 bits is an add_imm command that
// does not wait; DRAM counts one atomic add.
func TestAtomicAdd(t *testing.T) {
	p := prog(t, asm.Instructions{
		asm.Mov.Imm(asm.R1, 1),
		asm.StoreMem(asm.R0, 0, asm.R1, asm.DWord).WithSource(nil),
		asm.Return(),
	}, nil)
	p.Insns[1].OpCode = asm.OpCode(asm.StXClass).SetMode(asm.AtomicMode).SetSize(asm.DWord)
	p.Insns[1].Constant = int64(asm.Add)
	a := Analyze(p, []Region{0, MapValue, 0}, nil)
	s := a.Insn(1)
	if s.Latency != 0 || s.DRAMAdds != 1 || s.Insns != 3 {
		t.Errorf("got %+v, want a non-blocking 3-instruction add_imm", s)
	}
}

// A load from the stack between two packet loads through the same pointer
// ends the packet cache range (nfp_bpf_opt_pkt_cache: ptr.type is not
// PTR_TO_PACKET), so the second packet load reads the packet again.
func TestOtherLoadEndsPacketCache(t *testing.T) {
	p := prog(t, asm.Instructions{
		asm.LoadMem(asm.R5, asm.R1, 0, asm.Half),   // 0 packet: init
		asm.LoadMem(asm.R6, asm.R10, -8, asm.Word), // 1 stack
		asm.LoadMem(asm.R7, asm.R1, 4, asm.Word),   // 2 packet: init again
		asm.LoadMem(asm.R8, asm.R1, 8, asm.Word),   // 3 packet: from the cache
		asm.Mov.Imm(asm.R0, 2),
		asm.Return(),
	}, nil)
	a := Analyze(p, []Region{Packet, Stack, Packet, Packet}, nil)
	for i, want := range map[int]string{0: "mem_ldx_data_init_pktcache", 2: "mem_ldx_data_init_pktcache", 3: "mem_ldx_data_from_pktcache"} {
		if got := a.Insn(i).From; got != want {
			t.Errorf("instruction %d: %s, want %s", i, got, want)
		}
	}
}

// nfp_bpf_opt_neg_add_sub: an add or sub of a negative immediate, and the
// ordered compares against one, use its absolute value; -2^31 negates to
// itself (the JIT negates the 32-bit field), so its add becomes a sub of
// the same immediate.
func TestNegAddSub(t *testing.T) {
	p := prog(t, asm.Instructions{
		asm.Add.Imm32(asm.R3, -4),          // 0 sub 4: one alu, the zext (R3 read as 64 bits next)
		asm.Sub.Imm(asm.R3, -300),          // 1 add 300: immed, add, addc of 0
		asm.Add.Imm(asm.R3, math.MinInt32), // 2 immed 0x80000000, sub, immed ~0, subc
		asm.Instruction{OpCode: asm.JLT.Op(asm.ImmSource), Dst: asm.R3, Constant: -5}, // 3 add 5, addc 0, branch
		asm.Mov.Imm(asm.R0, 2),
		asm.Return(),
	}, nil)
	a := Analyze(p, nil, nil)
	for i, want := range []struct {
		insns int
		from  string
	}{{2, "wrp_alu32_imm"}, {3, "add_imm64"}, {4, "sub_imm64"}, {3, "cmp_imm"}} {
		if s := a.Insn(i); s.Insns != want.insns || s.From != want.from {
			t.Errorf("instruction %d (%v): %d from %s, want %d from %s", i, p.Insns[i], s.Insns, s.From, want.insns, want.from)
		}
	}
}
