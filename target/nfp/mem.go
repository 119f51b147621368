package nfp

import "github.com/cilium/ebpf/asm"

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
		// The indirect reference (data in PREV_ALU, length 8 or 12) is
		// 0x890 or 0xc90: one immed; then ld_field of the value and the
		// command. jit.c counts the same 3 (out += 3).
		s.add(1 + 1 + 1)
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
