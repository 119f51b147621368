// Package symex executes one path of a program graph symbolically, into
// SMT-LIB2 text, and asks an SMT solver whether any packet and any map
// contents can drive the program along it.
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
// Two lookups of equal keys in one map meet the same element: a map's
// contents are two uninterpreted functions of the key (is an element there,
// its value bytes), renamed after each update or delete of the map, which
// leaves the contents unconstrained (QF_AUFBV). Comparisons of the packet
// length (plus a constant) with a constant are decided against the
// interval of lengths the path allows, without the solver. Loading the
// same bytes of the same array version again gives the same term, and a
// term the path has asserted equal to a constant is that constant from
// then on (also through a zero extension), so a second comparison of a
// header field folds without the solver. A value computed
// by more than Options.Abstract operations (a hash) is replaced by a fresh
// unconstrained one while paths are checked; Example solves with the exact
// definitions and reports a path that is impossible with them
// (ErrHashRefuted). With Options.WellFormed every solver also asserts that
// the received packet's headers (Ethernet, VLAN tags, IPv4, IPv6, UDP,
// TCP) are valid as a host's stack parses them (wellformed.go), so that a
// path only a malformed packet takes is refuted.
//
// A Checker keeps one solver process and the symbolic state of every
// prefix of the last path it checked, so a path that shares a prefix with
// the previous one costs only the new edges (push/pop). The solver receives
// new levels only when a check needs them, so the model of the last check
// can decide a longer prefix without a check (Probe, Extend). That model
// is also kept in Go as a witness (witness.go), which outlives the solver's
// pops: a later prefix whose assertions hold in it, or hold once repair.go
// has edited a few of its free terms (a packet byte, a map's membership or
// value at a key, a length) by inverting the terms above them, is proven
// satisfiable without the solver, the whole prefix evaluated again after
// every edit. A DFS that backtracks to a branch's second side then checks
// it only when the edits fail. An
// unsatisfiable path comes back with the shortest prefix the solver
// refutes, found by binary search over prefixes. With Options.Lemmas, the
// Checker also finds, by a second binary search on a second solver, the
// shortest run of that prefix's last edges whose assertions contradict each
// other on their own, and keeps their text with canonical names (a lemma):
// a later path over the same edges whose text is the same is refuted
// without the solver. Paths that differ only in an earlier, unrelated
// choice (which of two VLAN ethertypes, say) then cost one solver
// refutation in all instead of one each. With Options.Families as well, a
// learned core's edges become a family (every path that takes them, in
// order, whatever it does between them), proven impossible as a whole by
// one check of an over-approximation of all its paths (family.go), so that
// an enumeration can leave the whole family out.
//
// For a satisfiable path, Example asks the solver for the shortest packet,
// and the map contents, that drive the program along it: an input to
// replay. Describe gives a path's SMT-LIB2 text without a solver.
package symex
