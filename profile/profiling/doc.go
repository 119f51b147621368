// Package profiling answers "where did the time of each I/O go during
// this run, or in this trace?" from start to end: it loads a task, runs
// one collection on the running kernel (Live: the collector, the task's
// time window, the command being profiled, the metrics server, the
// alternating of --alternate, the warnings) or reads recorded traces
// (Offline), and hands back the profile; Compare reads two profiles and
// compares them. Rendering the profile is left to the caller.
//
// It is the one place where the kernel side (package collect) and the
// analyses (packages analyze, tracetext, ctftrace, report) meet.
package profiling
