// Package bpfprog reads one eBPF program out of a compiled BPF ELF object:
// its flattened instructions (called subprograms appended, as
// github.com/cilium/ebpf lays them out), the functions they form, and the
// maps the program can reference. It never needs a running kernel.
package bpfprog
