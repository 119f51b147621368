package nfp

import (
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
)

// call is bpf_to_bpf_call: move the stack pointer and LMaddr0 by the
// caller's frame, branch with the return address in a register, and undo
// both on return (three nops after the CSR write).
func (a *Prog) call(i int) Seq {
	s := Seq{From: "bpf_to_bpf_call"}
	d := a.depth[a.p.FuncOf(i)]
	if d > 0 {
		s.add(urImm(uint32(d)) + 1 + 1)
	}
	s.branch()
	s.add(1)
	if d > 0 {
		s.add(urImm(uint32(d)) + 1 + 1 + 3)
	}
	s.add(1) // the callee's prologue saves the return address
	return s
}

// helper follows helper_call. On the nfp-agilio-cx target array maps are
// raw DRAM (the paper's modified driver): a lookup is address arithmetic
// in the program, no firmware call. Other maps branch to the firmware's
// hash table (map_call_stack_common), whose code is not visible.
func (a *Prog) helper(i int, fn asm.BuiltinFunc) Seq {
	m := a.maps[i]
	switch fn {
	case asm.FnMapLookupElem:
		if m != nil && (m.Type == ebpf.Array || m.Type == ebpf.PerCPUArray) {
			return a.rawLookup(i)
		}
		return a.firmwareMapCall(i, false)
	case asm.FnMapUpdateElem, asm.FnMapDeleteElem:
		s := a.firmwareMapCall(i, fn == asm.FnMapUpdateElem)
		if m != nil && (m.Type == ebpf.Array || m.Type == ebpf.PerCPUArray) {
			s.Unsupported = "raw DRAM arrays are written only by atomic add"
		}
		return s
	case asm.FnGetPrandomU32:
		s := Seq{From: "nfp_get_prandom_u32"}
		s.add(3)
		return s
	case asm.FnXdpAdjustHead:
		s := Seq{From: "adjust_head", Estimated: true}
		s.add(24)
		return s
	case asm.FnXdpAdjustTail:
		s := Seq{From: "adjust_tail", Estimated: true}
		s.add(12)
		return s
	case asm.FnPerfEventOutput:
		s := Seq{From: "nfp_perf_event_output", Estimated: true, DRAMReads: 2}
		s.add(300)
		return s
	}
	s := Seq{From: "helper_call", Unsupported: fmt.Sprintf("helper %v is not offloaded", fn), Estimated: true, DRAMReads: 2}
	s.add(300)
	return s
}

// Firmware hash table cost: bucket and entry reads in DRAM, code hidden in
// the firmware (an estimate, as in the averaged target).
const (
	firmwareCycles = 200
	firmwareReads  = 2
)

func (a *Prog) firmwareMapCall(i int, update bool) Seq {
	s := Seq{From: "map_call_stack_common", Estimated: true, Command: true, Latency: LatencyDRAM, DRAMReads: firmwareReads}
	keyAtStart := a.keyOffset(i) == 0
	if !keyAtStart {
		s.add(1)
	}
	if update {
		s.add(1)
		s.DRAMAdds = 1
	}
	s.branch()
	s.add(2)
	if !keyAtStart {
		s.add(1 + 3)
	}
	s.Cycles += firmwareCycles
	return s
}

// keyOffset is the LM offset of the key argument (R2) when it is R10 plus
// a constant set on the straight line before the call, else -1.
func (a *Prog) keyOffset(i int) int {
	start := a.p.Funcs[a.p.FuncOf(i)].Start
	add := int64(0)
	for j := i - 1; j >= start && !a.jumpDst[j+1]; j-- {
		ins := a.p.Insns[j]
		if ins.Dst != asm.R2 || !ins.OpCode.Class().IsALU() && ins.OpCode.Class() != asm.LdXClass {
			continue
		}
		op := ins.OpCode
		switch {
		case op.Class() == asm.ALU64Class && op.ALUOp() == asm.Add && op.Source() == asm.ImmSource:
			add += ins.Constant
			continue
		case op.Class() == asm.ALU64Class && op.ALUOp() == asm.Mov && op.Source() == asm.RegSource && ins.Src == asm.R10:
			return a.depth[a.p.FuncOf(i)] + int(add)
		}
		return -1
	}
	return -1
}

// rawLookup is a lookup in an array map that the paper's driver exposes as
// raw DRAM: read the key from the stack, check it against max_entries
// (branch to the NULL result not taken), scale it by the value size (a
// shift, or mul_step when the size is not a power of two), add the 40-bit
// base address of the array. No DRAM access: the loads and atomic adds on
// the value that follow are the DRAM operations.
func (a *Prog) rawLookup(i int) Seq {
	s := Seq{From: "raw array lookup (paper §4.2)"}
	key := a.keyOffset(i)
	switch {
	case key >= 0 && key+4 <= 64:
		s.add(1)
	case key >= 0:
		s.add(urImm(uint32(key/32*32)) + 1 + 1 + 3 + 1)
	default:
		s.add(1 + 1 + 3 + 1) // address in R2: alu, LMaddr3, nops, move
	}
	m := a.maps[i]
	s.add(urImm(m.MaxEntries) + 1)
	s.add(1) // branch to the NULL result, not taken
	if vs := m.ValueSize; vs&(vs-1) == 0 {
		s.add(1)
	} else {
		s.add(urImm(vs) + 7)
	}
	s.add(2 + 2) // immed of the base's low and high words, add and add with carry
	return s
}
