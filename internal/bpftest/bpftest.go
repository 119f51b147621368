// Package bpftest helps tests check that code which loads BPF programs
// leaves none behind: it names the programs a component loaded by kernel
// id and waits for the kernel to release them.
package bpftest

import (
	"testing"
	"time"

	"github.com/cilium/ebpf"
)

// IDs returns the kernel ids of progs.
func IDs(t testing.TB, progs ...*ebpf.Program) []ebpf.ProgramID {
	t.Helper()
	var ids []ebpf.ProgramID
	for _, p := range progs {
		info, err := p.Info()
		if err != nil {
			t.Fatal(err)
		}
		id, ok := info.ID()
		if !ok {
			t.Fatal("kernel does not report program ids")
		}
		ids = append(ids, id)
	}
	return ids
}

// StillLoaded returns which of ids the kernel still holds. The kernel frees
// programs asynchronously after their last reference closes, so it waits up
// to five seconds for them to go.
func StillLoaded(ids []ebpf.ProgramID) []ebpf.ProgramID {
	var left []ebpf.ProgramID
	for try := 0; try < 50; try++ {
		left = left[:0]
		for _, id := range ids {
			if p, err := ebpf.NewProgramFromID(id); err == nil {
				p.Close()
				left = append(left, id)
			}
		}
		if len(left) == 0 {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return left
}
