// Package nfp answers what each BPF instruction of a program costs once
// offloaded to a Netronome Agilio CX (NFP-4000): it translates BPF
// instructions into the NFP instruction sequences the Linux nfp JIT
// (drivers/net/ethernet/netronome/nfp/bpf/jit.c) emits for them, and prices
// the sequences with the cycle costs of the throughput-guarantee paper.
//
// The translation is a pure analysis of the program: Analyze derives what
// the JIT's verifier pass knows (which 32-bit results need their upper
// word zeroed, constant operands, which packet loads the packet cache
// serves, the stack depth), Prog.Insn returns the sequence of one
// instruction (translate.go dispatches by instruction class to alu.go,
// mem.go, jump.go and call.go) and Prog.Instructions counts the whole
// program's. Where the analysis knows less than the kernel's verifier, it
// assumes the longer sequence, so costs stay over-estimates.
// translation.md lists every entry with the jit.c function it follows.
package nfp
