// Package calibrate measures the cost model of the host it runs on: it
// assembles XDP micro-programs (github.com/cilium/ebpf/asm, no compiler),
// times them with BPF_PROG_TEST_RUN on one pinned CPU, and turns the times
// into an x86-64 target file (package target) whose costs are upper
// estimates: a high percentile of interleaved runs.
//
// Each cost is a difference: the time of a program holding N+K copies of
// one operation minus the time of the same program with N copies, divided
// by K, so the program's set-up, the test-run loop and the per-packet
// overhead cancel. Instructions a copy needs besides the operation (helper
// arguments, say) are priced by their own measurements and subtracted run
// by run. The per-packet overhead is the time of the smallest program
// itself. method.md describes every micro-program and how the target's
// costs are derived from them.
//
// A calibrated target records its spread and the host key it holds for
// (CPU, microcode, kernel, JIT settings); HostCache keeps this machine's
// calibration under the user's cache directory for --target host, measured
// on first use. Corpus times the steady paths of real programs (chosen by
// the interpreter, priced per cost group), and Fit scales a target's cost
// groups to them by a linear program (an envelope or a median fit, gonum's
// simplex). Report and FitReport are what `dpperf targets calibrate` and
// `dpperf targets fit` print (json.md).
//
// It loads programs into the kernel, so it is a measuring package, kept
// apart from the analyses (bound never imports it; Fit alone needs no
// kernel).
package calibrate
