//go:build !amd64 || race

package trace

import "sync/atomic"

// storeRelease sets *p to v with release order (see publish_amd64.go).
func storeRelease(p *atomic.Uint64, v uint64) { p.Store(v) }
