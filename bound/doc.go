// Package bound computes worst-case throughput bounds of eBPF programs on a
// target: it prices every edge of a program's loop-free graph with a cost
// vector (one entry per throughput-limiting component of the target),
// finds the naive bound (the slowest path, satisfiable or not), and
// enumerates paths slowest-first across components, each path once, at its
// bottleneck. The JSON form of a result is documented in json.md.
package bound
