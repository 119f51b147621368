// Package golden compares a test's output with a file under testdata/ and
// rewrites that file when the test binary runs with -update.
//
// Reports are checked whole: a golden file is the reviewed form of what a
// user sees, and a change to it shows up in review as a diff of that file.
package golden

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// Updating reports whether the test binary runs with -update.
func Updating() bool { return *update }

// Check compares got with testdata/name, or writes got there with -update.
// A missing file fails the test with a hint to create it.
func Check(t testing.TB, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the test with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (check, then run the test with -update to accept):\n%s", path, got)
	}
}

// CheckString is Check for text.
func CheckString(t testing.TB, name, got string) {
	t.Helper()
	Check(t, name, []byte(got))
}
