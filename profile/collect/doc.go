// Package collect answers "what is the running kernel doing to each request
// right now?": it attaches to the running kernel and streams path events,
// or whole requests (event.Record), to the analyzer, which it never
// imports: BPF programs on the block tracepoints (built from bpf/block.c
// with bpf2go, loaded with cilium/ebpf, filtering and 1-of-N sampling in
// the kernel, one record per finished request, staged per CPU and sent
// through a ring buffer in batches), BPF programs for the nvme-tcp path
// (bpf/nvme.c: nvme, nvmet and block tracepoints and the path's kprobe,
// records assembled in the kernel across queue/command id and device/sector
// keys; see records.md) or, for any path, a private tracefs instance whose
// text is parsed by package tracetext. Everything it attaches is detached
// by Close, also after errors and on cancellation. Attaching needs root.
//
// Kprobe events are attached only where the kernel has kprobes; otherwise
// they are reported as not observed with the reason, and the analyzer
// merges the stages around them.
package collect
