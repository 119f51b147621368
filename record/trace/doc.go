// Package trace is dpperf's instrumentation library for Go data-plane
// programs. A program registers one Worker per goroutine (or per worker of
// a pool) with a Tracer and calls the Worker's event methods on its hot
// path: named checkpoints (with a scoped START/END helper), RPC
// call/return/dispatch/reply between components, signal submit/receive,
// queue fill samples and Ethernet packet capture.
//
// Each Worker writes into its own single-producer ring Buffer without
// locks; a recorder (package record) attaches buffers to the workers its
// policies select and drains them periodically into CTF and pcapng files.
// A Worker without a buffer costs one load and one branch per call. When a
// buffer is full, events are dropped and counted, never partially written.
//
// The encoding of the records in a Buffer is described in FORMAT.md.
package trace
