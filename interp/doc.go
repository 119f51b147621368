// Package interp runs an eBPF XDP program concretely, in Go, on one packet
// and a model of its maps, and reports what the run did: the verdict and
// output packet, the exact instructions executed (in bpfprog's flattened
// numbering), memory accesses by region, helper calls, and the
// performance-critical variables (PCVs) the maps and loops met: hash bucket
// chain lengths, LRU evictions, LPM trie nodes visited, loop trip counts.
//
// Memory is segmented as the verifier sees it: a pointer is a region (the
// context, the packet, one stack frame, one map value, a map) and an offset,
// and every load and store is checked against its region, so an access out
// of bounds or into the wrong region is an error naming the instruction,
// never a silent result. The packet sits in a 4 KiB frame with the kernel's
// 256-byte XDP headroom, so xdp_adjust_head/meta/tail behave as they do
// under BPF_PROG_TEST_RUN.
//
// Maps are modelled per type (array, hash, LRU hash, LPM trie, their
// per-CPU variants, and device/CPU/XSK maps as redirect targets); the hash
// model follows the kernel's htab (power-of-two buckets, jhash, head
// insertion) so bucket chains are the kernel's for a given hash seed. The
// PCVs each map operation reports are declared in pcv.yaml; maps.md
// documents the models.
//
// Nothing here needs a kernel: the package testrun runs the same packet
// through BPF_PROG_TEST_RUN, and its tests compare the two.
package interp
