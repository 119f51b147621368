package golden

import (
	"os"
	"path/filepath"
	"testing"
)

// recorder is a testing.TB that records failures instead of stopping.
type recorder struct {
	testing.TB
	failed bool
}

func (r *recorder) Helper()               {}
func (r *recorder) Errorf(string, ...any) { r.failed = true }
func (r *recorder) Fatalf(string, ...any) { r.failed = true }
func (r *recorder) Fatal(...any)          { r.failed = true }

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "testdata"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "testdata", "a.txt"), []byte("same\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	defer func(u bool) { *update = u }(*update)
	*update = false
	for _, c := range []struct {
		name, got string
		fails     bool
	}{
		{"a.txt", "same\n", false},
		{"a.txt", "other\n", true},
		{"missing.txt", "x", true},
	} {
		r := &recorder{TB: t}
		Check(r, c.name, []byte(c.got))
		if r.failed != c.fails {
			t.Errorf("Check(%s, %q) failed=%v, want %v", c.name, c.got, r.failed, c.fails)
		}
	}
}
