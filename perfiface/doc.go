// Package perfiface answers what processing a packet costs an eBPF network
// function, as a function of the packet and the map state it meets. It
// extracts the function's performance interface: a small readable program
// that takes what the function takes and returns that cost.
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
// The conditions are expressions (expr.go, exprops.go) rebuilt from the
// solver's terms (cond.go) and named by the packet layout (layout.go);
// condtext.go negates and shortens their text. Compare (diff.go) matches
// the classes of two builds of a program through example inputs. A
// Deployment (deploy.go) specialises the interface to a trace, and its
// Validator (validate.go) checks the predictions against a measurement of
// the classes that the caller takes in the kernel.
//
// Nothing here needs a kernel.
package perfiface
