// Package kernel records Linux tracepoints into dpperf's CTF layout. For
// each tracepoint it reads the tracefs format description, loads a small
// BPF tracepoint program (built with cilium/ebpf's assembler, no C
// compiler needed) that copies the raw record with a timestamp, CPU and
// process ids into a BPF ring buffer, and writes the decoded records as
// one CTF stream per CPU ("cpu0", "cpu1", ...) of the component "kernel".
// Records the ring buffer had no room for are counted per CPU and appear
// as the streams' events_discarded.
//
// It needs root (CAP_BPF and CAP_PERFMON) and tracefs. Parsing the format
// files (format.go) needs neither and is fuzzed.
package kernel
