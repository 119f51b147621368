// Package perfiface extracts performance interfaces of eBPF network
// functions: small readable programs that take what the function takes (a
// packet and the map state it meets) and return what processing it costs.
//
// The analysis explores every feasible path of the program's loop-free
// graph (package cfg) with the symbolic executor and solver of package
// symex, pruning infeasible branches as it goes. Each path gets its metrics
// (BPF instructions, memory accesses by region, helper calls) and a cost
// formula under a target in the performance-critical variables (PCVs) its
// map operations meet, such as hash bucket traversals. The paths form a
// decision tree over the branch conditions, which are translated to
// protocol fields and map membership where the SMT terms allow. Merging
// subtrees whose costs differ by less than a resolution gives the
// interface at that resolution; the distinct merge thresholds are the
// minimal set of resolutions that yield different interfaces.
//
// Nothing here needs a kernel.
package perfiface
