// Package tracecompass ships the TraceCompass data-driven (XML) analyses
// for the CTF traces dpperf records: thread states, open checkpoints and
// queue fill as a state system with a time graph and an XY view
// (dpperf-states.xml), and checkpoint durations and RPC round trips as
// latency segments of a pattern analysis (dpperf-latency.xml). README.md
// says how to import them; `dpperf trace --tracecompass DIR` writes them.
package tracecompass

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Files holds the XML analyses.
//
//go:embed *.xml
var Files embed.FS

// Write writes the XML analyses into dir, creating it, and returns the
// paths written.
func Write(dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("tracecompass: %w", err)
	}
	names, err := fs.Glob(Files, "*.xml")
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, n := range names {
		data, err := Files.ReadFile(n)
		if err != nil {
			return nil, err
		}
		p := filepath.Join(dir, n)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return nil, fmt.Errorf("tracecompass: %w", err)
		}
		paths = append(paths, p)
	}
	return paths, nil
}
