// Package bound computes worst-case throughput bounds of eBPF programs on a
// target.
//
// It prices every edge of a program's loop-free graph (package cfg) with a
// cost vector, one entry per throughput-limiting component of the target
// (package target; through a Translator when the target names a JIT, so
// that the nfp target prices the NFP instructions of target/nfp), with map
// operations' PCVs at 0 or at the values --pcv assumes. History-dependent
// costs (a blocking memory access costs less when cycles have passed since
// the previous one) take the fewest cycles over all paths reaching a node,
// so every edge cost is an over-estimate and every path rate an
// under-estimate: the bound stays a bound.
//
// Naive gives the slowest path, satisfiable or not. SSP interleaves one
// slowest-first enumeration per component (and packet size) of package
// pathenum by the metric, each path at its bottleneck, and checks paths
// with symex workers until the slowest satisfiable one is found: refuted
// prefixes and families of impossible paths are left out of the
// enumeration. A Result breaks each path down by source line
// (instructions, cost per component, share of the bottleneck) and writes
// text, JSON (json.md), a stream of progress lines, the example packet as
// a pcap and the map contents it needs as a mapstate.
package bound
