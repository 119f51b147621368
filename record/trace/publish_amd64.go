//go:build amd64 && !race

package trace

import "sync/atomic"

// storeRelease sets *p to v with release order: every store before it is
// visible to a reader that sees v. On amd64 stores are not reordered with
// other stores, so a plain MOV does this; sync/atomic's Store is an XCHG,
// which also waits for the store buffer to drain, and cost about 7 ns per
// event on the hot path. The compiler does not move memory accesses across
// a call to an assembly function. Readers use p.Load. Builds with the race
// detector use p.Store (publish_other.go), which it understands.
//
//go:noescape
func storeRelease(p *atomic.Uint64, v uint64)
