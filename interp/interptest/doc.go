// Package interptest generates BPF programs for tests: random valid
// programs of arithmetic, branches and memory accesses (for the fuzz
// targets that hold the interpreter against symbolic execution and the
// kernel), and the smallest program that holds a given map. Packets and
// map contents come from package inputs.
package interptest
