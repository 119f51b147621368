// Package classtime measures, in the kernel with BPF_PROG_TEST_RUN, how
// long an XDP program takes on representative packets of each packet class
// of a trace, each in the map state it met in the trace (see
// replay.Representatives). It needs root; analyses that need no kernel live
// in replay.
//
// # How it measures
//
// Repeating one packet inside one BPF_PROG_TEST_RUN is not honest for
// stateful programs: the first run of a "new flow" packet inserts the flow
// and every further repeat takes the hit path. So every measurement is a
// single run (repeat 1) after restoring the packet's map state with
// testrun.Fill. Samples are visited round-robin (round 1 of every sample,
// then round 2, ...), so noise from other load spreads over all classes
// instead of landing on one. The kernel reports each single run in whole
// nanoseconds, and that figure includes a fixed cost of the test harness
// (a clock read, bottom-half disabling). Report.Overhead measures it: an
// empty XDP program (r0 = XDP_PASS; exit) is timed the same way just
// before every timed run, after the same restore, so it meets the same
// cache conditions; Class.Net is the class median minus the median of
// those baseline runs.
//
// Restoring the state costs hundreds of syscalls, which leave the data
// caches partly cold; the single-run figures are therefore those of a
// packet arriving after other work, not of a tight loop over one packet.
// With Options.Warm, a sample's state is filled once and, after each run,
// only the entries the run changed are put back (testrun.Undo): the runs
// then meet the caches the previous run left, as the packets of a stream
// do (Katran's new-flow path: 3.5 µs a run after a refill, 0.7 µs warm).
// Hash maps in the kernel use a random hash seed unless created with
// BPF_F_ZERO_SEED, so kernel bucket chains need not be the interpreter's.
//
// As a cross-check, a packet whose repeats provably take one path — the
// interpreter runs it Repeat times from its state and every run follows
// the first one's instructions — is also timed with Repeat runs inside one
// BPF_PROG_TEST_RUN (Class.RepeatNs: warm caches, the harness cost
// amortised over the repeats). Packets whose state changes their path (new flows, deletes)
// have no such figure.
package classtime
