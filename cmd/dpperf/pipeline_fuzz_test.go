package main

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dpperf/dpperf/bpfprog"
	"github.com/dpperf/dpperf/internal/fail"
	"github.com/dpperf/dpperf/internal/testobj"
)

// pipelineSeeds are the objects FuzzPipeline starts from: small bundled
// examples and libxdp's filters (every seed runs on each plain `go test`,
// so the slow-to-explore ones stay out).
var pipelineSeeds = []string{"fig2", "parser", "counter", "loop", "call", "legacy", "flowtable", "labels", "text_entry"}

// FuzzPipeline takes object bytes through everything a user's object meets:
// the program list, the encoding and map checks, the graph, the naive
// bound, a search capped at a few solver checks and the coarse interface.
// Whatever the bytes, each command returns: no panic (which Guard would
// report as an internal error), every error on one line, and an invalid
// program always an input error (exit 2).
func FuzzPipeline(f *testing.F) {
	for _, name := range pipelineSeeds {
		addFile(f, testobj.Built(f, name))
	}
	for _, name := range []string{"xdpfilt_alw_eth.o", "xdpfilt_dny_udp.o"} {
		addFile(f, filepath.Join(testobj.LibXDPDir, name))
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		obj := filepath.Join(dir, "fuzz.o")
		if err := os.WriteFile(obj, data, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{
			{"programs", obj},
			{"bound", "--naive", "--target", "x86-64", obj},
			// The limits only cap a run; what is checked holds however
			// far it got.
			{"bound", "--target", "x86-64", "--workers", "1", "--max-checks", "3", "--solver-timeout", "1s", "--time-limit", "2s", obj},
			{"interface", "--workers", "1", "--max-paths", "8", "--max-depth", "6", "--time-limit", "2s", obj},
		} {
			err := fail.Guard(func() error { return run(context.Background(), args, io.Discard, io.Discard) })
			if err == nil {
				continue
			}
			cmd := strings.Join(args[:len(args)-1], " ")
			var ie *fail.InternalError
			switch {
			case errors.As(err, &ie):
				t.Fatalf("dpperf %s: %v", cmd, err)
			case strings.Contains(err.Error(), "\n"):
				t.Errorf("dpperf %s: error on several lines: %q", cmd, err)
			}
			if _, ok := bpfprog.IsInvalid(err); ok && fail.ExitCode(err) != fail.ExitInput {
				t.Errorf("dpperf %s: invalid program exits %d: %v", cmd, fail.ExitCode(err), err)
			}
			if strings.Contains(err.Error(), "multiple programs") || fail.ExitCode(err) == fail.ExitInput {
				return // later commands would fail alike
			}
		}
	})
}

func addFile(f *testing.F, path string) {
	b, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
}
