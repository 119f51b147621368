// Package nfp translates BPF instructions into the NFP instruction
// sequences the Linux nfp JIT (drivers/net/ethernet/netronome/nfp/bpf/jit.c)
// emits for them, and prices the sequences with the cycle costs of the
// throughput-guarantee paper for the Netronome Agilio CX (NFP-4000).
//
// The translation is a pure analysis of the program: Analyze derives what
// the JIT's verifier pass knows (which 32-bit results need their upper
// word zeroed, constant operands, which packet loads the packet cache
// serves, the stack depth), and Prog.Insn returns the sequence of one
// instruction. Where the analysis knows less than the kernel's verifier,
// it assumes the longer sequence, so costs stay over-estimates.
// translation.md lists every entry with the jit.c function it follows.
package nfp
