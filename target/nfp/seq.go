package nfp

// Cycle costs of the NFP cores (the paper's §4.1 and its artifact): most
// instructions take one cycle; a taken branch four, a branch not taken one.
const (
	CyclesInsn     = 1 // alu, immed, ld_field, shf, mul_step, csr, nop, memory command issue
	CyclesTaken    = 4 // conditional branch taken, unconditional branch
	CyclesNotTaken = 1 // conditional branch not taken
)

// Latencies of blocking memory commands: a thread that waits for a command
// is charged at least BlockMin cycles, at most the latency of the memory.
const (
	LatencySRAM = 16 // packet data in the island's CTM/SRAM, 32-bit addresses
	LatencyDRAM = 25 // map values in DRAM behind the memory engine, 40-bit addresses
)

// DRAM memory engine cycles (at 800 MHz) per operation: the engine served
// 197.4–199.7 M reads/s and 248.5–250.5 M atomic adds/s; the lower ends
// give the worst case.
const (
	EngineRead = 4.052463035413383
	EngineAdd  = 3.219818925010342
)

// Per-packet instructions the JIT adds around the program (nfp_intro and
// the XDP exit path of nfp_outro_xdp), executed once per packet on top of
// the firmware's overhead.
const (
	IntroInsns  = 2  // immed + alu: the packet length from the packet vector
	OutroCycles = 13 // range check of R0, verdict table, branch to the next packet
)

// Seq is the NFP code the JIT emits for one BPF instruction.
type Seq struct {
	Insns int // NFP instructions emitted
	// Cycles is the core time of the slowest way through the sequence. A
	// conditional jump's own branch is left out: the edge taken or not
	// taken prices it.
	Cycles float64
	// Command: the sequence issues a memory command. Latency > 0: the
	// thread waits for its answer, at most Latency cycles.
	Command bool
	Latency float64
	// DRAM memory engine operations.
	DRAMReads, DRAMAdds int
	From                string // the jit.c function followed
	// Unsupported says why the kernel's nfp JIT refuses the instruction
	// ("" when it translates it); such instructions are priced anyway.
	Unsupported string
	// Estimated: the sequence runs code the JIT does not show (firmware
	// helpers), whose cost is an estimate.
	Estimated bool
}

// add appends n one-cycle instructions.
func (s *Seq) add(n int) {
	s.Insns += n
	s.Cycles += float64(n) * CyclesInsn
}

// branch appends an unconditional branch.
func (s *Seq) branch() {
	s.Insns++
	s.Cycles += CyclesTaken
}

// immedLen is the number of immed instructions wrp_immed needs for a
// 32-bit constant: one when it, or its complement, fits 16 bits at a byte
// shift (pack_immed), else two.
func immedLen(imm uint32) int {
	if packs(imm) || packs(^imm) {
		return 1
	}
	return 2
}

func packs(imm uint32) bool {
	return imm&0xffff0000 == 0 || imm&0xff0000ff == 0 || imm&0x0000ffff == 0
}

// urImm is the cost of ur_load_imm_any: operands up to 0xff are encoded in
// the instruction, larger ones take an immed first.
func urImm(imm uint32) int {
	if imm <= 0xff {
		return 0
	}
	return immedLen(imm)
}

// reImm is re_load_imm_any: the restricted encoding holds up to 0x7f.
func reImm(imm uint32) int {
	if imm <= 0x7f {
		return 0
	}
	return immedLen(imm)
}

// aluImm is wrp_alu_imm: an and/or/xor with an all-zero or all-one operand
// is an immed, a not or nothing; otherwise an optional immed and the alu.
func aluImm(op string, imm uint32) int {
	switch op {
	case "and":
		if imm == 0 {
			return 1
		}
		if imm == ^uint32(0) {
			return 0
		}
	case "or":
		if imm == ^uint32(0) {
			return 1
		}
		if imm == 0 {
			return 0
		}
	case "xor":
		if imm == ^uint32(0) {
			return 1
		}
		if imm == 0 {
			return 0
		}
	}
	return urImm(imm) + 1
}
