package nfp

import (
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
)

// Insn returns the NFP code of instruction i (the first slot of a 64-bit
// immediate load carries both halves).
func (a *Prog) Insn(i int) Seq {
	ins := a.p.Insns[i]
	op := ins.OpCode
	switch cls := op.Class(); {
	case cls == asm.ALU64Class:
		return a.alu64(i, ins)
	case cls == asm.ALUClass:
		return a.alu32(i, ins)
	case cls == asm.LdClass && op.Mode() == asm.ImmMode:
		s := Seq{From: "imm_ld8_part2"}
		lo, hi := uint32(ins.Constant), uint32(uint64(ins.Constant)>>32)
		s.add(immedLen(lo))
		if hi == lo {
			s.add(1)
		} else {
			s.add(immedLen(hi))
		}
		return s
	case cls == asm.LdClass:
		return a.ldClassic(i, ins)
	case cls == asm.LdXClass:
		return a.load(i, ins)
	case cls == asm.StClass, cls == asm.StXClass:
		if op.Mode() == asm.AtomicMode {
			return a.atomic(i, ins)
		}
		return a.store(i, ins)
	case cls.IsJump():
		return a.jump(i, ins)
	}
	return Seq{Unsupported: "not a BPF instruction the nfp JIT knows"}
}

// Program returns the NFP instructions of the whole program: every BPF
// instruction's sequence, the prologue, the XDP exit path, the callee
// register save and restore routines when a callee needs them, and the
// instruction-store prefetch padding (nfp_translate).
func (a *Prog) Program() int {
	n := IntroInsns + outroInsns + prefetchPad
	push := false
	for i := range a.p.Insns {
		n += a.Insn(i).Insns
		if f := a.p.FuncOf(i); f > 0 && i == a.p.Funcs[f].Start {
			n++ // nfp_subprog_prologue: save the return address
			push = push || a.usesCalleeSaved(f)
		}
	}
	if push {
		n += 2 * 9 // nfp_push_callee_registers, nfp_pop_callee_registers
	}
	return n
}

const (
	outroInsns  = 13 // nfp_outro_xdp
	prefetchPad = 8  // NFP_USTORE_PREFETCH_WINDOW nops
)

// usesCalleeSaved says whether function f writes R6–R9 (needs_reg_push).
func (a *Prog) usesCalleeSaved(f int) bool {
	fn := a.p.Funcs[f]
	for _, ins := range a.p.Insns[fn.Start:fn.End] {
		_, _, defs := reads(ins)
		for _, d := range defs {
			if d >= asm.R6 && d <= asm.R9 {
				return true
			}
		}
	}
	return false
}

func (a *Prog) zextLen(i int) int {
	if a.zext[i] {
		return 1
	}
	return 0
}

var aluNames = map[asm.ALUOp]string{asm.And: "and", asm.Or: "or", asm.Xor: "xor", asm.Add: "add", asm.Sub: "sub"}

func (a *Prog) alu64(i int, ins asm.Instruction) Seq {
	op := ins.OpCode
	imm := op.Source() == asm.ImmSource
	lo, hi := uint32(ins.Constant), uint32(uint64(ins.Constant)>>32)
	s := Seq{}
	switch aop := op.ALUOp(); aop {
	case asm.Mov:
		switch {
		case imm:
			s.From = "mov_imm64"
			s.add(immedLen(lo) + immedLen(hi))
		case ins.Src == asm.R10:
			s.From = "mov_reg64"
			s.add(urImm(uint32(a.depth[a.p.FuncOf(i)])) + 1 + 1)
		default:
			s.From = "mov_reg64"
			s.add(2)
		}
	case asm.And, asm.Or, asm.Xor:
		s.From = aluNames[aop] + "_reg64"
		if imm {
			s.From = aluNames[aop] + "_imm64"
			s.add(aluImm(aluNames[aop], lo) + aluImm(aluNames[aop], hi))
		} else {
			s.add(2)
		}
	case asm.Add, asm.Sub:
		s.From = aluNames[aop] + "_reg64"
		if imm {
			s.From = aluNames[aop] + "_imm64"
			s.add(urImm(lo) + 1 + urImm(hi) + 1)
		} else {
			s.add(2)
		}
	case asm.Mul:
		s.From = "wrp_mul"
		s.add(a.mulLen(i, ins, true))
	case asm.Div:
		return a.div(i, ins)
	case asm.Neg:
		s.From = "neg_reg64"
		s.add(2)
	case asm.LSh, asm.RSh, asm.ArSh:
		return a.shift64(i, ins)
	default:
		return Seq{From: "instr_cb", Unsupported: fmt.Sprintf("%v has no entry in the JIT's instruction table", aop)}
	}
	return s
}

func (a *Prog) alu32(i int, ins asm.Instruction) Seq {
	op := ins.OpCode
	imm := op.Source() == asm.ImmSource
	v := uint32(ins.Constant)
	s := Seq{}
	switch aop := op.ALUOp(); aop {
	case asm.Mov:
		if imm {
			s.From = "mov_imm"
			s.add(immedLen(v) + 1)
		} else {
			s.From = "mov_reg"
			s.add(2)
		}
		return s
	case asm.And, asm.Or, asm.Xor, asm.Add, asm.Sub:
		if imm {
			s.From = "wrp_alu32_imm"
			s.add(aluImm(aluNames[aop], v))
		} else {
			s.From = "wrp_alu32_reg"
			s.add(1)
		}
	case asm.Mul:
		s.From = "wrp_mul"
		s.add(a.mulLen(i, ins, false))
		return s
	case asm.Div:
		return a.div(i, ins)
	case asm.Neg:
		s.From = "neg_reg"
		s.add(1)
	case asm.LSh, asm.RSh, asm.ArSh:
		amt, known := v, imm
		if !imm {
			c, ok := a.constant(i, ins.Src)
			amt, known = uint32(c), ok
		}
		s.From = map[asm.ALUOp]string{asm.LSh: "shl_imm", asm.RSh: "shr_imm", asm.ArSh: "ashr_imm"}[aop]
		switch {
		case !known:
			s.From = map[asm.ALUOp]string{asm.LSh: "shl_reg", asm.RSh: "shr_reg", asm.ArSh: "ashr_reg"}[aop]
			s.add(2)
		case amt != 0 && aop == asm.ArSh:
			s.add(2)
		case amt != 0:
			s.add(1)
		}
	case asm.Swap:
		s.From = "end_reg32"
		if op.Endianness() != asm.BE {
			s.Unsupported = "only conversions to big endian are in the JIT's table"
		}
		switch ins.Constant {
		case 64:
			s.add(5)
		default:
			s.add(3)
		}
		return s
	default:
		return Seq{From: "instr_cb", Unsupported: fmt.Sprintf("%v has no entry in the JIT's instruction table", aop)}
	}
	s.add(a.zextLen(i))
	return s
}

// mulLen is wrp_mul: a 16x16 multiply when both operands are known to fit
// 16 bits, else 32x32 with the upper word (64-bit) or an immed zeroing it.
func (a *Prog) mulLen(i int, ins asm.Instruction, wide bool) int {
	n := 0
	small := false
	if ins.OpCode.Source() == asm.ImmSource {
		n += urImm(uint32(ins.Constant))
		if c, ok := a.constant(i, ins.Dst); ok {
			small = uint64(c) <= 0xffff && uint64(uint32(ins.Constant)) <= 0xffff
		}
	}
	if small {
		return n + 4
	}
	return n + 7
}

// div is wrp_div_imm: division by a constant, by a shift for powers of two
// and by reciprocal multiplication otherwise (the longest form counted).
func (a *Prog) div(i int, ins asm.Instruction) Seq {
	s := Seq{From: "wrp_div_imm"}
	d, ok := uint64(uint32(ins.Constant)), true
	if ins.OpCode.Source() == asm.RegSource {
		var c int64
		c, ok = a.constant(i, ins.Src)
		d = uint64(c)
	}
	switch {
	case !ok:
		s.Unsupported = "division by a register the verifier cannot prove constant"
		s.add(13)
	case d > 1<<31:
		s.add(urImm(uint32(d)) + 3)
	case d&(d-1) == 0:
		s.add(2 + 1)
	default:
		s.add(2 + 7 + 4)
	}
	return s
}

// shift64 follows the 64-bit shifts: two shf for amounts below 32, a move
// or shf and an immed otherwise; a register amount of unknown range takes
// the runtime choice between both (the longer way counted).
func (a *Prog) shift64(i int, ins asm.Instruction) Seq {
	op := ins.OpCode
	names := map[asm.ALUOp]string{asm.LSh: "shl", asm.RSh: "shr", asm.ArSh: "ashr"}
	s := Seq{From: "__" + names[op.ALUOp()] + "_imm64"}
	amt, known := uint32(ins.Constant), true
	if op.Source() == asm.RegSource {
		c, ok := a.constant(i, ins.Src)
		amt, known = uint32(c), ok
	}
	switch {
	case !known:
		s.From = names[op.ALUOp()] + "_reg64"
		// br_bset, the <32 sequence (3 + 2 in defer slots), the branch
		// over the >=32 sequence (3).
		s.Insns = 1 + 3 + 1 + 2 + 3
		s.Cycles = CyclesNotTaken + 3 + CyclesTaken + 2
		if op.ALUOp() == asm.ArSh {
			s.Insns, s.Cycles = s.Insns+1, s.Cycles+1
		}
	case amt == 0:
	case op.ALUOp() == asm.ArSh:
		s.add(3)
		if amt == 32 {
			s.Insns, s.Cycles = 2, 2
		}
	default:
		s.add(2)
	}
	return s
}

// ldClassic is construct_data_ld / construct_data_ind_ld (LD_ABS, LD_IND).
func (a *Prog) ldClassic(i int, ins asm.Instruction) Seq {
	size := ins.OpCode.Size().Sizeof()
	s := Seq{From: "construct_data_ld", Command: true, Latency: LatencySRAM}
	off := uint32(ins.Constant)
	if ins.OpCode.Mode() == asm.IndMode {
		s.From = "construct_data_ind_ld"
		s.add(urImm(off) + 1 + 2)
	} else {
		s.add(urImm(off+uint32(size)) + 1 + reImm(off))
	}
	s.add(1) // the packet length check's branch, not taken
	s.add(1 + 1 + a.zextLen(i))
	return s
}

// load follows mem_ldx by the region of the pointer.
func (a *Prog) load(i int, ins asm.Instruction) Seq {
	size := ins.OpCode.Size().Sizeof()
	switch a.regions[i] {
	case Ctx:
		s := Seq{From: "mem_ldx_xdp"}
		s.add(2)
		if ins.Offset > 4 { // data and data_end only
			s.Unsupported = "only xdp_md.data and data_end are readable"
		}
		return s
	case Stack:
		return a.stackOp(i, ins, size, true)
	case MapValue:
		s := Seq{From: "mem_ldx_emem", Command: true, Latency: LatencyDRAM, DRAMReads: 1}
		off := uint32(int32(ins.Offset))
		s.add(reImm(off))
		if off != 0 {
			s.add(2) // addr40_offset
		}
		s.add(1 + words(size) + a.zextIfNarrow(i, size))
		return s
	case Packet:
		return a.packetLoad(i, size)
	}
	// Unknown: the dearest of the regions a load may read.
	s := a.packetLoad(i, size)
	s.From = "mem_ldx"
	s.add(3)
	s.Latency, s.DRAMReads, s.Command = LatencyDRAM, 1, true
	return s
}

func words(size int) int { return (size + 3) / 4 }

func (a *Prog) zextIfNarrow(i, size int) int {
	if size < 8 {
		return a.zextLen(i)
	}
	return 0
}

// packetLoad is a load served by the packet cache: the first load of a
// range reads it (mem_ldx_data_init_pktcache, blocking), every load then
// extracts its bytes from the transfer registers
// (mem_ldx_data_from_pktcache_aligned / _unaligned).
func (a *Prog) packetLoad(i, size int) Seq {
	c := a.cache[i]
	s := Seq{From: "mem_ldx_data_from_pktcache"}
	if c.init {
		s.From = "mem_ldx_data_init_pktcache"
		s.Command, s.Latency = true, LatencySRAM
		s.add(reImm(uint32(int32(c.start))) + 1)
		if c.end-c.start > 32 {
			s.add(1) // indirect length in PREV_ALU
		}
	}
	off := (int(a.p.Insns[i].Offset) - c.start) % 4
	switch {
	case size == 8 && off == 0:
		s.add(2)
	case size == 8:
		s.add(4)
	case off+size > 4:
		s.add(2 + a.zextLen(i))
	default:
		s.add(1 + a.zextLen(i))
	}
	return s
}

// stackOp is mem_op_stack: accesses within the first 64 bytes of the
// frame use LMaddr0 directly; others set LMaddr3 (a CSR write and three
// nops) after computing the address. A pointer other than R10 counts as
// not constant (the dearest form).
func (a *Prog) stackOp(i int, ins asm.Instruction, size int, load bool) Seq {
	s := Seq{From: "mem_op_stack"}
	depth := a.depth[a.p.FuncOf(i)]
	base := ins.Src
	if !load {
		base = ins.Dst
	}
	narrow := load && size < 8
	off := depth + int(ins.Offset)
	lm3, inc := true, false
	switch {
	case base != asm.R10:
		s.add(urImm(uint32(int32(ins.Offset))) + 1)
		inc = true
		off %= 4
	case off+size <= 64:
		lm3 = false
	case off/32 == (off+size-1)/32:
		s.add(urImm(uint32(off/32*32)) + 1)
		off %= 32
	default:
		s.add(urImm(uint32(off/4*4)) + 1)
		inc = true
		off %= 4
	}
	if lm3 {
		nops := 3
		if narrow && a.zext[i] {
			nops = 2
		}
		s.add(1 + nops)
	}
	if narrow {
		s.add(a.zextLen(i))
	}
	// One step per slice of the access within a 32-bit word.
	for rest, gprByte, first := size, 0, true; rest > 0; first = false {
		slice := min(rest, 4-gprByte, 4-off%4)
		last := slice == rest
		newGPR := first || gprByte == 0
		idx := off / 4
		switch {
		case slice == 4:
			s.add(1)
		case idx > 7 && lm3 || idx > 15:
			s.add(2)
		default:
			s.add(1)
		}
		if inc && newGPR && !last {
			s.add(1)
		}
		gprByte = (gprByte + slice) % 4
		rest -= slice
		off += slice
	}
	if !load && ins.OpCode.Class() == asm.StClass {
		s.Unsupported = "stores of an immediate are translated for packet memory only (mem_st)"
		s.add(immedLen(uint32(ins.Constant)))
	}
	return s
}

// store follows mem_stx and mem_st.
func (a *Prog) store(i int, ins asm.Instruction) Seq {
	size := ins.OpCode.Size().Sizeof()
	switch a.regions[i] {
	case Stack:
		return a.stackOp(i, ins, size, false)
	case Ctx:
		s := Seq{From: "nfp_queue_select", Estimated: true}
		s.add(4)
		return s
	}
	s := Seq{From: "mem_stx_data", Command: true, Latency: LatencySRAM}
	s.add(reImm(uint32(int32(ins.Offset))))
	if ins.OpCode.Class() == asm.StClass {
		s.From = "mem_st_data"
		s.add(immedLen(uint32(ins.Constant)))
		if size == 8 {
			s.add(immedLen(uint32(uint64(ins.Constant) >> 32)))
		}
	} else {
		s.add(words(size))
	}
	s.add(1)
	if a.regions[i] == MapValue {
		s.Unsupported = "map values are written only by atomic add"
		s.Latency, s.DRAMAdds = LatencyDRAM, 1
	}
	return s
}

// atomic is mem_xadd: an add of a value known to fit 16 bits is an
// add_imm command that does not wait; otherwise the value goes through a
// transfer register and the thread waits for the command's signal. When
// the value's size is not known both are emitted behind a run-time check.
func (a *Prog) atomic(i int, ins asm.Instruction) Seq {
	s := Seq{From: "mem_xadd", Command: true, DRAMAdds: 1}
	if ins.Constant != int64(asm.Add) {
		s.Unsupported = "only atomic add is translated"
	}
	if a.regions[i] != MapValue && a.regions[i] != Unknown {
		s.Unsupported = "atomics are translated on map values only"
	}
	wide := ins.OpCode.Size() == asm.DWord
	off := uint32(int32(ins.Offset))
	s.add(urImm(off))
	if off != 0 {
		s.add(2)
	}
	v, known := a.constant(i, ins.Src)
	small := known && v >= 0 && v <= 0xffff
	over := !known || !small
	maybe := !known || small
	if maybe && over {
		s.add(3)
		s.Insns++ // the branch choosing the command; taken costs more
		s.Cycles += CyclesTaken
	}
	if maybe {
		s.add(2 + 1 + 1) // immed of the indirect reference, ld_field, command
		if over {
			s.branch()
		}
	}
	if over {
		s.add(1 + 1)
		if wide {
			s.add(1)
		}
		s.Latency = LatencyDRAM
	}
	return s
}

// jump follows the jump table: compares are alu instructions on the low
// and, for 64-bit jumps, high words, then a branch.
func (a *Prog) jump(i int, ins asm.Instruction) Seq {
	op := ins.OpCode
	jop := op.JumpOp()
	wide := op.Class() == asm.JumpClass
	imm := op.Source() == asm.ImmSource
	lo, hi := uint32(ins.Constant), uint32(uint64(ins.Constant)>>32)
	s := Seq{}
	switch jop {
	case asm.Ja:
		s.From = "jump"
		s.branch()
		return s
	case asm.Exit:
		if a.p.FuncOf(i) == 0 {
			s.From = "goto_out"
			s.branch()
			return s
		}
		s.From = "nfp_subprog_epilogue"
		s.add(1)
		s.branch()
		if a.usesCalleeSaved(a.p.FuncOf(i)) {
			s.add(8) // nfp_pop_callee_registers
		}
		return s
	case asm.Call:
		if ins.IsFunctionCall() {
			return a.call(i)
		}
		return a.helper(i, asm.BuiltinFunc(ins.Constant))
	}
	// The conditional branch itself is priced by the edge; it is one
	// instruction here.
	s.Insns = 1
	switch {
	case jop == asm.JEq && imm && wide:
		s.From = "jeq_imm"
		if lo != 0 {
			s.add(urImm(lo) + 1)
		}
		if hi != 0 {
			s.add(urImm(hi) + 1)
		}
		s.add(1)
	case jop == asm.JEq && imm:
		s.From = "jeq32_imm"
		s.add(urImm(lo) + 1)
	case jop == asm.JSet && imm:
		s.From = "jset_imm"
		s.add(urImm(lo) + 1)
		if wide && hi != 0 {
			s.add(1)
		}
	case jop == asm.JNE && imm:
		s.From = "jne_imm"
		switch {
		case ins.Constant == 0:
			s.add(1)
		case !wide:
			s.add(urImm(lo) + 1)
		default:
			// Low word compared and branched first (not taken on the
			// way to the second branch), then the high word.
			s.add(urImm(lo) + 1)
			s.Insns++
			s.Cycles += CyclesNotTaken
			s.add(urImm(hi) + 1)
		}
	case imm:
		s.From = "cmp_imm"
		s.add(urImm(lo) + 1)
		if wide {
			s.add(urImm(hi) + 1)
		}
	case jop == asm.JEq:
		s.From = "jeq_reg"
		s.add(1)
		if wide {
			s.add(2)
		}
	case jop == asm.JSet || jop == asm.JNE:
		s.From = "wrp_test_reg"
		s.add(1)
		if wide {
			s.Insns++
			s.Cycles += CyclesNotTaken
			s.add(1)
		}
	default:
		s.From = "cmp_reg"
		s.add(1)
		if wide {
			s.add(1)
		}
	}
	return s
}

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
