package bound

import (
	"github.com/cilium/ebpf/asm"

	"github.com/dpperf/dpperf/target"
)

// chainCosts adds the latency of the longest dependency chain of
// instructions insns[first..last] (one basic block) to the costs of its
// instructions: per holds each instruction's cost as an independent
// operation (its throughput), and every instruction on the chain gets the
// target's Chain price for its class on top (ChainLoad for a load,
// ChainStack for a load of a slot the block stored). The block then costs
// its throughput sum plus its critical path, at least either of the two
// an out-of-order core is bound by; the two terms stay apart so that a
// fit scales each (the chain group). Dependencies are registers and stack
// slots written and read in the block; a call (helper or bpf-to-bpf) ends
// every chain, its own cost being serial. It returns the cost added.
func chainCosts(t *target.Target, insns asm.Instructions, first, last int, inCallee bool, per []target.Vec) target.Vec {
	type src struct {
		ready float64
		insn  int // the instruction whose result it is, or -1
	}
	var regs [asm.R10 + 1]src
	reset := func() {
		for r := range regs {
			regs[r] = src{insn: -1}
		}
	}
	reset()
	stack := map[int16]src{}
	n := last - first + 1
	lat := make([]target.Vec, n)
	pred := make([]int, n)
	end, endAt := 0.0, -1
	for k := range n {
		ins := insns[first+k]
		pred[k] = -1
		var reads []asm.Register
		write, writes := asm.R0, false
		fromStack, slot := false, int16(0)
		op := ins.OpCode
		switch op.Class() {
		case asm.ALUClass, asm.ALU64Class:
			lat[k] = t.Chain[target.Class(ins, inCallee)]
			if op.ALUOp() != asm.Mov {
				reads = append(reads, ins.Dst)
			}
			if op.Source() == asm.RegSource && op.ALUOp() != asm.Swap && op.ALUOp() != asm.Neg {
				reads = append(reads, ins.Src)
			}
			write, writes = ins.Dst, true
		case asm.LdXClass:
			reads = append(reads, ins.Src)
			write, writes = ins.Dst, true
			fromStack, slot = ins.Src == asm.R10, ins.Offset
			if !fromStack {
				lat[k] = t.Chain[target.ChainLoad]
			}
		case asm.LdClass:
			if op.Mode() == asm.ImmMode { // a constant: no inputs
				regs[ins.Dst] = src{insn: -1}
				continue
			}
			reset() // legacy packet loads call into the kernel
			continue
		case asm.StXClass:
			if op.Mode() == asm.AtomicMode {
				reset()
				continue
			}
			if ins.Dst == asm.R10 {
				stack[ins.Offset] = regs[ins.Src]
			}
			continue
		case asm.StClass:
			if ins.Dst == asm.R10 {
				stack[ins.Offset] = src{insn: -1}
			}
			continue
		default: // jumps, calls, exit
			if ins.IsBuiltinCall() || ins.IsFunctionCall() || op.JumpOp() == asm.Exit {
				reset()
				clear(stack)
			}
			continue
		}
		start := 0.0
		for _, r := range reads {
			if s := regs[r]; s.insn >= 0 && s.ready > start {
				start, pred[k] = s.ready, s.insn
			}
		}
		if fromStack {
			if s, ok := stack[slot]; ok && s.insn >= 0 && s.ready > start {
				start, pred[k] = s.ready, s.insn
				lat[k] = t.Chain[target.ChainStack]
			}
		}
		done := start + sum(lat[k])
		if writes {
			regs[write] = src{ready: done, insn: k}
		}
		if done > end {
			end, endAt = done, k
		}
	}
	var added target.Vec
	for k := endAt; k >= 0; k = pred[k] {
		per[k] = per[k].Add(lat[k])
		added = added.Add(lat[k])
	}
	return added
}

// sum adds the components of v: the weight by which chains are compared.
func sum(v target.Vec) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s
}
