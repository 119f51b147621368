// Package capture runs one recording from start to stop: the user-space
// recorder (package record) draining on its own thread, the optional
// kernel tracepoints (record/kernel) on the recording's clock, and the
// optional demo pipeline (record/pipeline) as the traced workload. It
// returns the statistics `dpperf record` prints (docs/record.md, "dpperf
// record --json") and leaves no tracepoint program attached, whatever
// ends the run.
package capture
