// Package layers states the rules the import graph of dpperf keeps and
// checks them against `go list`: every package belongs to one layer, and
// a layer imports only the layers below it.
//
//	cli        cmd/dpperf, internal/cmd/...     may import every layer below
//	kernel     loads, attaches, measures        base, runtime, analysis, kernel
//	analysis   never needs a running kernel     base, analysis
//	runtime    user-space tracing and recording base, runtime
//	base       small types and formats          base
//
// Two more groups stand aside: test inputs and helpers (imported by tests
// only, never by a package's own code) and examples (imported by nothing).
// The rules are in the table of layers.go; the test of this package fails
// when `go list ./...` shows a package outside the table or an import
// against the rules, or a hand-written file of more than 500 lines.
package layers
