package layers

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// maxLines is the most lines a hand-written non-test file may hold: a
// file longer than that does more than one job its name can say.
const maxLines = 500

// TestFilesHaveOneJob fails on a hand-written non-test Go file of the
// module over maxLines lines (generated files, marked as Go marks them,
// are left out).
func TestFilesHaveOneJob(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.Dir}}{{range .GoFiles}} {{.}}{{end}}", "github.com/dpperf/dpperf/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	files := 0
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		for _, name := range f[1:] {
			data, err := os.ReadFile(filepath.Join(f[0], name))
			if err != nil {
				t.Fatal(err)
			}
			files++
			if bytes.Contains(data[:min(len(data), 400)], []byte("Code generated")) {
				continue
			}
			if n := bytes.Count(data, []byte("\n")); n > maxLines {
				t.Errorf("%s: %d lines, more than %d: split it along its jobs", filepath.Join(f[0], name), n, maxLines)
			}
		}
	}
	if files < 100 {
		t.Fatalf("only %d files listed", files)
	}
}
