// Package target holds the cost models that bound and interface analyses
// price BPF instructions with: which components of a machine limit
// throughput (processing cores, a DRAM engine, ...), how much of each an
// instruction class, memory access or helper call uses, per-packet overhead
// and fixed limits (MAC packet rate, line rate).
//
// Targets are YAML files; the built-in ones are embedded in the binary and
// documented in targets/README.md. Load reads a built-in target by name or
// any target file by path.
package target
