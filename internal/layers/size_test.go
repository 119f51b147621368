package layers

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// maxLines is the most lines a hand-written non-test file may hold: a
// file longer than that does more than one job its name can say.
const maxLines = 500

// TestFilesHaveOneJob fails on a hand-written non-test Go file of the
// module over maxLines lines (generated files, marked as Go marks them,
// are left out).
func TestFilesHaveOneJob(t *testing.T) {
	files := 0
	for dir, names := range goList(t, "{{.Dir}}{{range .GoFiles}} {{.}}{{end}}") {
		for _, name := range names {
			data, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			files++
			if bytes.Contains(data[:min(len(data), 400)], []byte("Code generated")) {
				continue
			}
			if n := bytes.Count(data, []byte("\n")); n > maxLines {
				t.Errorf("%s: %d lines, more than %d: split it along its jobs", filepath.Join(dir, name), n, maxLines)
			}
		}
	}
	if files < 100 {
		t.Fatalf("only %d files listed", files)
	}
}
