// Package bpfprog reads one eBPF program out of a compiled BPF ELF object
// and checks it as the kernel would before anything analyses it. It never
// needs a running kernel.
//
// What it reads: the object's entry points (SEC() names, iproute2's legacy
// sections such as `prog`, and uncalled global functions of .text, shown
// to github.com/cilium/ebpf's reader through an in-memory rename of the
// section); a program's flattened instructions (called subprograms
// appended, as cilium/ebpf lays them out) and the functions they form; and
// the maps the program can reference, from BTF .maps, struct bpf_map_def
// or iproute2's struct bpf_elf_map (id, pinning, inner map). List is what
// `dpperf programs --json` prints (programs.md).
//
// What it checks (validate.go, mapcheck.go): the fields each opcode
// reserves, the sizes MOVSX and LDSX allow, shifts and divisions by an
// immediate, jumps that land inside their function and never inside an
// LD_IMM64, LD_IMM64 kinds, call targets and helper ids, functions that end
// in an exit or a jump, and each map type's limits on key size, value size
// and entries. A program the kernel would refuse gives an InvalidError
// naming the object, program, instruction and source line; packages symex
// and interp raise the same error for operations the verifier rejects on
// their types. JumpTarget says where a jump lands, for the checks, cfg and
// interp alike.
//
// It also holds the concrete semantics of BPF arithmetic and comparisons
// (ALU, Cmp, Mirror, Negate, Signed) that interp, symex and cfg share.
package bpfprog
