// Package cfg turns an eBPF program into the loop-free control-flow graph
// that path analyses work on.
//
// It first splits each BPF function into basic blocks and finds its natural
// loops, then expands the whole program into a DAG: every bpf-to-bpf call is
// inlined at its call site (a fresh copy of the callee per site), and every
// loop is unrolled. Trip counts come from a small abstract interpretation
// (constants, and pointers as region+offset) that also classifies each
// memory access by region (packet, stack, context, map value) and prunes
// branches whose outcome it can prove. A loop whose bound it cannot prove
// needs a bound from the user (Options.Unroll or Options.LoopBounds).
//
// Node and edge creation order is a topological order of the DAG, from the
// source (program entry) to the sink (program exit).
package cfg
