// Package testrun runs one XDP program of a BPF object in the kernel with
// BPF_PROG_TEST_RUN: it loads the program and only the maps it uses (with
// github.com/cilium/ebpf), fills the maps from a mapstate.State, runs
// packets, times them with the kernel's own clock, and reads the maps back.
// It is the kernel-side twin of package interp and needs Linux and root;
// everything it loads is released by Close.
package testrun
