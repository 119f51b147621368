package interp

import (
	"strings"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/dpperf/dpperf/bpfprog"
	"github.com/dpperf/dpperf/mapstate"
)

// testMaps are the maps the assembled test programs may reference.
var testMaps = map[string]*bpfprog.Map{
	"arr":  {Name: "arr", Type: ebpf.Array, KeySize: 4, ValueSize: 8, MaxEntries: 4},
	"hash": {Name: "hash", Type: ebpf.Hash, KeySize: 4, ValueSize: 8, MaxEntries: 2},
	"lru":  {Name: "lru", Type: ebpf.LRUHash, KeySize: 4, ValueSize: 8, MaxEntries: 2},
	"lpm":  {Name: "lpm", Type: ebpf.LPMTrie, KeySize: 8, ValueSize: 4, MaxEntries: 8},
	"dev":  {Name: "dev", Type: ebpf.DevMap, KeySize: 4, ValueSize: 4, MaxEntries: 4},
}

// asmRun assembles insns (with the test maps) and runs them on a 64-byte
// packet of bytes 0, 1, 2, ...
func asmRun(t *testing.T, insns asm.Instructions, state *mapstate.State) (*Result, error) {
	t.Helper()
	maps := map[string]*bpfprog.Map{}
	for _, ins := range insns {
		if ref := ins.Reference(); ref != "" && ins.IsLoadFromMap() {
			maps[ref] = testMaps[ref]
		}
	}
	p, err := bpfprog.New("t", ebpf.XDP, insns, maps)
	if err != nil {
		t.Fatal(err)
	}
	ms, err := NewMaps(p, state, MapOptions{NumCPU: 2})
	if err != nil {
		t.Fatal(err)
	}
	it, err := New(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	pkt := make([]byte, 64)
	for i := range pkt {
		pkt[i] = byte(i)
	}
	return it.Run(Input{Packet: pkt}, ms)
}

func ld64(r asm.Register, v int64) asm.Instruction { return asm.LoadImm(r, v, asm.DWord) }

func TestInstructions(t *testing.T) {
	type tc struct {
		name  string
		insns asm.Instructions
		want  uint64 // r0, full 64 bits (the verdict is its low half)
	}
	cases := []tc{
		{"add32 wraps and zero-extends", asm.Instructions{ld64(asm.R0, -1), asm.Add.Imm32(asm.R0, 2)}, 1},
		{"div by zero is 0", asm.Instructions{asm.Mov.Imm(asm.R0, 7), asm.Mov.Imm(asm.R1, 0), asm.Div.Reg(asm.R0, asm.R1)}, 0},
		{"mod by zero keeps dst", asm.Instructions{asm.Mov.Imm(asm.R0, 7), asm.Mov.Imm(asm.R1, 0), asm.Mod.Reg(asm.R0, asm.R1)}, 7},
		{"mod32 by zero truncates dst", asm.Instructions{ld64(asm.R0, 1<<32|7), asm.Mov.Imm(asm.R1, 0), asm.Mod.Reg32(asm.R0, asm.R1)}, 7},
		{"sdiv", asm.Instructions{asm.Mov.Imm(asm.R0, -7), asm.SDiv.Imm(asm.R0, 2)}, uint64(^uint64(0) - 2)}, // -3
		{"smod", asm.Instructions{asm.Mov.Imm(asm.R0, -7), asm.SMod.Imm(asm.R0, 2)}, ^uint64(0)},             // -1
		{"sdiv min by -1", asm.Instructions{ld64(asm.R0, -1<<63), asm.SDiv.Imm(asm.R0, -1)}, 1 << 63},
		{"sdiv32", asm.Instructions{asm.Mov.Imm(asm.R0, -8), asm.SDiv.Imm32(asm.R0, 2)}, 0xfffffffc},
		{"movsx8", asm.Instructions{asm.Mov.Imm(asm.R1, 0x80), asm.MovSX8.Reg(asm.R0, asm.R1)}, 0xffffffffffffff80},
		{"movsx16 32-bit", asm.Instructions{asm.Mov.Imm(asm.R1, 0x8000), asm.MovSX16.Reg32(asm.R0, asm.R1)}, 0xffff8000},
		{"movsx32", asm.Instructions{ld64(asm.R1, 0x80000000), asm.MovSX32.Reg(asm.R0, asm.R1)}, 0xffffffff80000000},
		{"arsh32", asm.Instructions{asm.Mov.Imm32(asm.R0, -16), asm.ArSh.Imm32(asm.R0, 2)}, 0xfffffffc},
		{"lsh masks the count", asm.Instructions{asm.Mov.Imm(asm.R0, 1), asm.Mov.Imm(asm.R1, 65), asm.LSh.Reg(asm.R0, asm.R1)}, 2},
		{"neg", asm.Instructions{asm.Mov.Imm(asm.R0, 1), asm.Neg.Imm(asm.R0, 0)}, ^uint64(0)},
		{"be16", asm.Instructions{ld64(asm.R0, 0x11223344), asm.HostTo(asm.BE, asm.R0, asm.Half)}, 0x4433},
		{"le32 truncates", asm.Instructions{ld64(asm.R0, 0x1122334455), asm.HostTo(asm.LE, asm.R0, asm.Word)}, 0x22334455},
		{"bswap64", asm.Instructions{ld64(asm.R0, 0x0102030405060708), asm.BSwap(asm.R0, asm.DWord)}, 0x0807060504030201},
		{"jump32 ignores the high half", asm.Instructions{
			ld64(asm.R1, 1<<32|5), asm.Mov.Imm(asm.R0, 0),
			skip(asm.JEq.Imm32(asm.R1, 5, ""), 1), asm.Return(),
			asm.Mov.Imm(asm.R0, 1)}, 1},
		{"signed jump", asm.Instructions{
			asm.Mov.Imm(asm.R1, -1), asm.Mov.Imm(asm.R0, 0),
			skip(asm.JSLT.Imm(asm.R1, 0, ""), 1), asm.Return(),
			asm.Mov.Imm(asm.R0, 1)}, 1},
		{"packet load, data_end arithmetic", asm.Instructions{
			asm.LoadMem(asm.R2, asm.R1, 0, asm.Word), asm.LoadMem(asm.R3, asm.R1, 4, asm.Word),
			asm.Mov.Reg(asm.R0, asm.R3), asm.Sub.Reg(asm.R0, asm.R2), // 64
			asm.LoadMem(asm.R4, asm.R2, 10, asm.Half), asm.Add.Reg(asm.R0, asm.R4)}, 64 + 0x0b0a},
		{"sign-extending load", asm.Instructions{
			asm.StoreImm(asm.RFP, -8, 0xff, asm.Byte), asm.LoadMemSX(asm.R0, asm.RFP, -8, asm.Byte)}, ^uint64(0)},
		{"pointer spill keeps its region", asm.Instructions{
			asm.LoadMem(asm.R2, asm.R1, 0, asm.Word), asm.StoreMem(asm.RFP, -8, asm.R2, asm.DWord),
			asm.LoadMem(asm.R3, asm.RFP, -8, asm.DWord), asm.LoadMem(asm.R0, asm.R3, 3, asm.Byte)}, 3},
		{"atomics", asm.Instructions{
			st64(-8, 10), asm.Mov.Imm(asm.R1, 5),
			asm.AddAtomic.Mem(asm.RFP, asm.R1, asm.DWord, -8),                       // 15
			asm.Mov.Imm(asm.R2, 3), asm.FetchOr.Mem(asm.RFP, asm.R2, asm.DWord, -8), // 15|3 = 15, r2 = 15
			asm.Mov.Imm(asm.R3, 100), asm.Xchg.Mem(asm.RFP, asm.R3, asm.DWord, -8), // mem 100, r3 = 15
			asm.Mov.Imm(asm.R0, 100), asm.Mov.Imm(asm.R4, 7),
			asm.CmpXchg.Mem(asm.RFP, asm.R4, asm.DWord, -8), // mem 7, r0 = 100
			asm.LoadMem(asm.R5, asm.RFP, -8, asm.DWord),
			asm.Add.Reg(asm.R0, asm.R2), asm.Add.Reg(asm.R0, asm.R3), asm.Add.Reg(asm.R0, asm.R5)}, 100 + 15 + 15 + 7},
		{"atomic32 fetch zero-extends", asm.Instructions{
			asm.StoreImm(asm.RFP, -8, -1, asm.Word), asm.Mov.Imm(asm.R0, 1),
			asm.FetchAdd.Mem(asm.RFP, asm.R0, asm.Word, -8)}, 0xffffffff},
		{"bpf-to-bpf call keeps R6-R9 and its own stack", asm.Instructions{
			asm.Mov.Imm(asm.R6, 40), st64(-8, 2),
			asm.Call.Label("f"),
			asm.LoadMem(asm.R1, asm.RFP, -8, asm.DWord), asm.Add.Reg(asm.R0, asm.R6), asm.Add.Reg(asm.R0, asm.R1), asm.Return(),
			asm.Mov.Imm(asm.R6, 1000).WithSymbol("f"), st64(-8, 99), asm.Mov.Imm(asm.R0, 0), asm.Return()}, 42},
		{"array lookup and update", asm.Instructions{
			asm.StoreImm(asm.RFP, -4, 3, asm.Word), st64(-16, 9),
			asm.LoadMapPtr(asm.R1, 0).WithReference("arr"), asm.Mov.Reg(asm.R2, asm.RFP), asm.Add.Imm(asm.R2, -4),
			asm.Mov.Reg(asm.R3, asm.RFP), asm.Add.Imm(asm.R3, -16), asm.Mov.Imm(asm.R4, 0),
			asm.FnMapUpdateElem.Call(),
			asm.LoadMapPtr(asm.R1, 0).WithReference("arr"), asm.Mov.Reg(asm.R2, asm.RFP), asm.Add.Imm(asm.R2, -4),
			asm.FnMapLookupElem.Call(), asm.LoadMem(asm.R0, asm.R0, 0, asm.DWord)}, 9},
		{"hash full is E2BIG", hashInserts("hash", 3), neg(errE2BIG)},
		{"lru full evicts", hashInserts("lru", 3), 0},
		{"adjust_head to the frame start", asm.Instructions{
			asm.Mov.Imm(asm.R2, -(Headroom - xdpFrame)), asm.FnXdpAdjustHead.Call()}, 0},
		{"adjust_head past the frame start", asm.Instructions{
			asm.Mov.Imm(asm.R2, -(Headroom - xdpFrame + 1)), asm.FnXdpAdjustHead.Call()}, neg(errEINVAL)},
		{"adjust_meta misaligned", asm.Instructions{asm.Mov.Imm(asm.R2, -2), asm.FnXdpAdjustMeta.Call()}, neg(errEACCES)},
		{"adjust_tail shrinks to 14", asm.Instructions{asm.Mov.Imm(asm.R2, -50), asm.FnXdpAdjustTail.Call()}, 0},
		{"adjust_tail below 14", asm.Instructions{asm.Mov.Imm(asm.R2, -51), asm.FnXdpAdjustTail.Call()}, neg(errEINVAL)},
		{"csum_diff", asm.Instructions{
			asm.StoreImm(asm.RFP, -8, 0x01020304, asm.Word), asm.Mov.Imm(asm.R1, 0), asm.Mov.Imm(asm.R2, 0),
			asm.Mov.Reg(asm.R3, asm.RFP), asm.Add.Imm(asm.R3, -8), asm.Mov.Imm(asm.R4, 4), asm.Mov.Imm(asm.R5, 0),
			asm.FnCsumDiff.Call()}, 0x0406}, // 0x0102 + 0x0304
		{"redirect_map miss returns the flags' action", asm.Instructions{
			asm.LoadMapPtr(asm.R1, 0).WithReference("dev"), asm.Mov.Imm(asm.R2, 1), asm.Mov.Imm(asm.R3, 2),
			asm.FnRedirectMap.Call()}, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			insns := c.insns
			if insns[len(insns)-1].OpCode.JumpOp() != asm.Exit {
				insns = append(insns, asm.Return())
			}
			res, err := asmRun(t, insns, nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.Verdict != uint32(c.want) {
				t.Errorf("r0 = %#x, want %#x", res.Verdict, uint32(c.want))
			}
		})
	}
}

// hashInserts inserts keys 1..n into a map and returns the last result.
func hashInserts(m string, n int) asm.Instructions {
	var insns asm.Instructions
	for k := 1; k <= n; k++ {
		insns = append(insns,
			asm.StoreImm(asm.RFP, -4, int64(k), asm.Word), st64(-16, 0),
			asm.LoadMapPtr(asm.R1, 0).WithReference(m), asm.Mov.Reg(asm.R2, asm.RFP), asm.Add.Imm(asm.R2, -4),
			asm.Mov.Reg(asm.R3, asm.RFP), asm.Add.Imm(asm.R3, -16), asm.Mov.Imm(asm.R4, 0),
			asm.FnMapUpdateElem.Call())
	}
	return insns
}

// TestAccessErrors: bad accesses are errors naming the instruction.
func TestAccessErrors(t *testing.T) {
	cases := []struct {
		name  string
		insns asm.Instructions
		want  string
	}{
		{"past data_end", asm.Instructions{asm.LoadMem(asm.R2, asm.R1, 0, asm.Word), asm.LoadMem(asm.R0, asm.R2, 63, asm.Half)},
			"insn 1: load of 2 bytes at offset 319 outside packet [256, 320)"},
		{"below the stack", asm.Instructions{asm.LoadMem(asm.R0, asm.RFP, -520, asm.DWord)}, "insn 0: load of 8 bytes at offset -8 outside stack"},
		{"null map value", asm.Instructions{
			asm.StoreImm(asm.RFP, -4, 1, asm.Word), asm.LoadMapPtr(asm.R1, 0).WithReference("hash"),
			asm.Mov.Reg(asm.R2, asm.RFP), asm.Add.Imm(asm.R2, -4), asm.FnMapLookupElem.Call(),
			asm.LoadMem(asm.R0, asm.R0, 0, asm.DWord)}, "insn 5: load through a scalar (0x0)"},
		{"store to ctx", asm.Instructions{asm.StoreImm(asm.R1, 0, 0, asm.Word)}, "insn 0: store of 4 bytes at context offset 0"},
		{"narrow ctx load", asm.Instructions{asm.LoadMem(asm.R0, asm.R1, 0, asm.Byte)}, "only 4-byte loads of xdp_md fields"},
		{"map pointer deref", asm.Instructions{asm.LoadMapPtr(asm.R1, 0).WithReference("arr"), asm.LoadMem(asm.R0, asm.R1, 0, asm.DWord)},
			"load through a pointer to map arr"},
		{"unknown helper", asm.Instructions{asm.FnSkbLoadBytes.Call()}, "helper FnSkbLoadBytes is not modelled"},
		{"fib_lookup", asm.Instructions{asm.FnFibLookup.Call()}, "bpf_fib_lookup is not modelled"},
		{"endless loop", asm.Instructions{skip(asm.Ja.Label(""), -1)}, "more than 1048576 instructions"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			insns := append(c.insns, asm.Mov.Imm(asm.R0, 0), asm.Return())
			_, err := asmRun(t, insns, nil)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one containing %q", err, c.want)
			}
			_, invalid := bpfprog.IsInvalid(err)
			if bad := strings.Contains(c.want, "not modelled") || strings.Contains(c.want, "instructions"); invalid == bad {
				t.Errorf("error %v: invalid program %v, want %v", err, invalid, !bad)
			}
		})
	}
}

func neg(errno int) uint64 { return uint64(-int64(errno)) }

// st64 stores a 64-bit immediate on the stack (asm.StoreImm refuses DWord).
func st64(off int16, v int64) asm.Instruction {
	return asm.Instruction{OpCode: asm.StoreImmOp(asm.DWord), Dst: asm.RFP, Offset: off, Constant: v}
}

// skip sets a jump's offset (assembled code has no resolved labels).
func skip(ins asm.Instruction, off int16) asm.Instruction {
	ins.Offset = off
	return ins
}
