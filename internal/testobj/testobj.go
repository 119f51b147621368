// Package testobj locates the compiled BPF objects that tests analyse: the
// examples and third-party programs built into build/bpf by `make bpf`, and
// the objects Debian's libxdp1 package installs.
package testobj

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// LibXDPDir is where Debian's libxdp1 installs its BPF objects.
const LibXDPDir = "/usr/lib/x86_64-linux-gnu/bpf"

// Root returns the repository root.
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// Built returns the path of build/bpf/name.o and fails the test when it has
// not been built.
func Built(t testing.TB, name string) string {
	t.Helper()
	p := filepath.Join(Root(), "build", "bpf", name+".o")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("%s is missing: run 'make bpf' first (%v)", p, err)
	}
	return p
}

// LibXDP returns the paths of every object libxdp1 installs, failing the
// test when the package is absent (scripts/setup.sh installs it).
func LibXDP(t testing.TB) []string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(LibXDPDir, "*.o"))
	if len(m) == 0 {
		t.Fatalf("no objects in %s: install libxdp1 (scripts/setup.sh)", LibXDPDir)
	}
	return m
}
