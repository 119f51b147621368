// Package symex executes one path of a program graph symbolically and asks
// an SMT solver whether any packet and any map contents can drive the
// program along it.
//
// Registers and stack bytes are bit-vector terms, folded to constants where
// they are known. The packet is a symbolic byte array with a symbolic
// length; data, data_meta and data_end are offsets into it, so bounds
// checks become conditions on the length. Map values are symbolic byte
// arrays too: "the memory may hold anything". Pointers keep their region
// (context, packet, stack frame, map value) under arithmetic, as the
// verifier guarantees, which is the segmented memory model of the source
// document. Helpers are modelled as the kernel documents them; a helper
// without a model gets an unconstrained result and havocs the memory its
// pointer arguments reach, and the Checker reports that over-approximation
// in its notes.
//
// A Checker keeps one solver process and the symbolic state of every
// prefix of the last path it checked, so a path that shares a prefix with
// the previous one costs only the new edges (push/pop). An unsatisfiable
// path comes back with the shortest prefix the solver's unsat core refutes.
package symex
