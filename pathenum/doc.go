// Package pathenum enumerates the source-to-sink paths of an edge-weighted
// DAG from the longest to the shortest, one at a time, after Kundu's
// incremental longest-path algorithm (INTEGRATION, the VLSI Journal 17(1),
// 1994).
//
// Every node keeps a list of its path prefixes sorted longest first, built
// lazily: element k of a node's list is the best of its in-edges' next
// candidates, each candidate being an element of the predecessor's list plus
// the edge weight. Producing the next path at the sink extends only the
// lists on the back-walk of the path just produced, so the (n+1)-th path
// costs time independent of n. Elements share prefixes through back
// pointers (24 bytes each, in chunks that are never copied); no path is
// ever materialised unless asked for.
package pathenum
