package nfp

import "github.com/cilium/ebpf/asm"

// copyRun is a copy nfp_bpf_opt_ldst_gather merges: pairs of a load from
// a map value and a store of the loaded register to the packet, of one
// width, at consecutive offsets, become one read command of up to 128
// bytes and one write (nfp_cpp_memcpy).
type copyRun struct {
	store        int   // the first pair's store, which carries the write
	n            int   // bytes copied
	desc         bool  // the pairs walk down
	ldOff, stOff int16 // the offsets of the commands: the lowest pair's
	size         asm.Size
}

// ldstGather follows nfp_bpf_opt_ldst_gather over the instruction list. It
// marks the later loads and stores of each merged run (member) and
// returns the runs by their first load. Copies between two packet
// pointers, which the JIT merges when it can prove they do not overlap,
// are left as they are (priced dearer).
func (a *Prog) ldstGather() (map[int]*copyRun, []bool) {
	runs := map[int]*copyRun{}
	member := make([]bool, len(a.p.Insns))
	head, prev, count, n := -1, -1, 0, 0
	finish := func() {
		if count > 1 {
			r := &copyRun{store: head + 1, n: n, size: a.p.Insns[head].OpCode.Size()}
			r.ldOff, r.stOff = a.p.Insns[head].Offset, a.p.Insns[head+1].Offset
			if a.p.Insns[prev].Offset < r.ldOff {
				r.desc = true
				r.ldOff, r.stOff = a.p.Insns[prev].Offset, a.p.Insns[prev+1].Offset
			}
			runs[head] = r
		} else if head >= 0 {
			member[head], member[head+1] = false, false
		}
	}
	for i := 0; i+1 < len(a.p.Insns); i++ {
		pair := a.copyPair(i)
		if !pair || prev >= 0 && !a.chains(prev, i) || head >= 0 && n >= 128 {
			if count == 0 {
				continue
			}
			finish()
			head, prev, count, n = -1, -1, 0, 0
			if pair {
				head, prev, count, n = i, i, 1, a.p.Insns[i].OpCode.Size().Sizeof()
				i++
			}
			continue
		}
		if head < 0 {
			head = i
		} else {
			member[i], member[i+1] = true, true
		}
		n += a.p.Insns[i].OpCode.Size().Sizeof()
		prev = i
		count++
		i++
	}
	return runs, member
}

// copyPair: instruction i loads from a map value and i+1 stores that
// register, at the same width, to the packet, with no jump landing on the
// store (curr_pair_is_memcpy).
func (a *Prog) copyPair(i int) bool {
	ld, st := a.p.Insns[i], a.p.Insns[i+1]
	return ld.OpCode.Class() == asm.LdXClass && ld.OpCode.Mode() == asm.MemMode && a.regions[i] == MapValue &&
		st.OpCode.Class() == asm.StXClass && st.OpCode.Mode() == asm.MemMode && a.regions[i+1] == Packet &&
		ld.OpCode.Size() == st.OpCode.Size() && ld.Dst == st.Src && !a.jumpDst[i+1]
}

// chains: pair i continues the run whose last pair is prev: same
// registers and width, offsets one width further up or down on both
// sides, and no jump landing on it (curr_pair_chain_with_previous).
func (a *Prog) chains(prev, i int) bool {
	pl, ps := a.p.Insns[prev], a.p.Insns[prev+1]
	ld, st := a.p.Insns[i], a.p.Insns[i+1]
	size := int16(ld.OpCode.Size().Sizeof())
	if ld.Dst != pl.Dst || ld.Src != pl.Src || st.Dst != ps.Dst || ld.OpCode.Size() != pl.OpCode.Size() || a.jumpDst[i] {
		return false
	}
	return pl.Offset+size == ld.Offset && ps.Offset+size == st.Offset ||
		ld.Offset+size == pl.Offset && st.Offset+size == ps.Offset
}

// memcpyRead is nfp_cpp_memcpy up to its write: the source address (a
// 40-bit add for an offset), the length override above 32 bytes, the read
// into transfer registers (blocking), their moves to the output transfer
// registers; then the reload of the first load's register, which the JIT
// keeps so that the register holds what it held before the merge.
//
// The memory engine's cost of one read was measured with reads of at most
// 8 bytes (the paper's §4.2); what a longer burst costs it was not. The
// run's read is priced as the reads of 8 bytes it replaces, ⌈n/8⌉, so the
// merge saves core instructions and waits but never engine work.
func (a *Prog) memcpyRead(r *copyRun) Seq {
	s := Seq{From: "nfp_cpp_memcpy", Command: true, Latency: LatencyDRAM, DRAMReads: (r.n + 7) / 8}
	s.add(reImm(uint32(int32(r.ldOff))))
	if r.ldOff != 0 {
		s.add(2) // addr40_offset
	}
	if r.n > 32 {
		s.add(1)
	}
	s.add(1 + words(r.n) + 2)
	return s
}

// memcpyWrite is nfp_cpp_memcpy's write of the copied bytes to the
// packet: one command, or two (with an immed for the length override or
// a second offset) for lengths a single command cannot carry. Every write
// waits for its signal; a second one's wait is priced as core cycles.
func (a *Prog) memcpyWrite(r *copyRun) Seq {
	s := Seq{From: "nfp_cpp_memcpy (write)", Command: true, Latency: LatencySRAM}
	s.add(reImm(uint32(int32(r.stOff))))
	switch n := r.n; {
	case n <= 8, n <= 32 && n%4 == 0:
		s.add(1)
	case n <= 32, n%4 == 0:
		s.add(2) // immed of the length, indirect command
	case n <= 40:
		s.add(1 + reImm(uint32(int32(r.stOff)+32)) + 1)
		s.Cycles += LatencySRAM
	default:
		s.add(2 + reImm(uint32(int32(r.stOff)+int32(words(n)-1)*4)) + 1)
		s.Cycles += LatencySRAM
	}
	return s
}
