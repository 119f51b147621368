// Package kernel records Linux tracepoints into dpperf's CTF layout. For
// each tracepoint it reads the tracefs format description, loads a small
// BPF tracepoint program (built with cilium/ebpf's assembler, no C
// compiler needed) that copies the raw record with a timestamp, CPU and
// process ids into a BPF ring buffer, and writes the decoded records as
// one CTF stream per CPU ("cpu0", "cpu1", ...) of the component "kernel".
//
// Packets follow each other in time and keep every event's timestamp: a
// drain writes only the samples stamped before its watermark, the time
// before which it has read every sample (drain.go, stream.go). Samples
// stamped later wait for a later packet. Each program marks its CPU's
// slot while it runs, so the drain knows which CPU may still publish an
// older sample.
//
// Events the recording does not hold are counted, never dropped unseen:
// samples the ring buffer had no room for, per CPU, in that CPU's
// events_discarded; tracepoint hits the kernel did not run a program for
// because a BPF program was already running on the CPU (a completion
// interrupt arriving while one of the recorder's programs runs, the common
// case under load), counted by the kernel per program, in the
// events_discarded of an extra stream "missed" that holds no events.
//
// It needs root (CAP_BPF and CAP_PERFMON) and tracefs. Parsing the format
// files (format.go) needs neither and is fuzzed.
package kernel
