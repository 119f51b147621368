// Package analyze reads the CTF traces of a recording (as written by
// package record or record/kernel) and computes the analyses of `dpperf
// record analyze`: checkpoint durations (START/END pairs), RPC round-trip
// latency per pair of components, thread state timelines, queue fill over
// time and event counts; it renders them as text tables or JSON (schema in
// docs/record.md) and exports Chrome/Perfetto trace-event JSON.
//
// It needs no kernel: it only reads files. Streams are read one packet at
// a time, so memory grows with the number of durations kept, not with the
// size of the trace.
package analyze
