package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dpperf/dpperf/internal/golden"
)

// TestInterfaceDiffGolden compares the text report of the flowcount pair
// with testdata/interface/diff-flowcount.txt (-update rewrites it).
func TestInterfaceDiffGolden(t *testing.T) {
	out, errs, code := dpperf(t, "interface", "diff", "--solver-timeout", "60s", "--workers", "1", built(t, "flowcount"), built(t, "flowcount_v2"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	golden.CheckString(t, "interface/diff-flowcount.txt", out)
}

// TestInterfaceDiffFailAbove gates on the largest regression, a new UDP
// flow from a new source (+32.7%).
func TestInterfaceDiffFailAbove(t *testing.T) {
	old, nu := built(t, "flowcount"), built(t, "flowcount_v2")
	cases := []struct {
		args []string
		code int
	}{
		{[]string{"--fail-above", "40"}, 0},
		{[]string{"--fail-above", "32.7"}, 0},
		{[]string{"--fail-above", "32.6"}, 1},
		{[]string{"--fail-above", "0"}, 1},
		{[]string{"--json"}, 0},
		{[]string{"--json", "--fail-above", "10"}, 1},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			args := append(append([]string{"interface", "diff", "--workers", "1"}, c.args...), old, nu)
			out, errs, code := dpperf(t, args...)
			if code != c.code {
				t.Fatalf("exit %d, want %d: %s", code, c.code, errs)
			}
			if out == "" {
				t.Error("no report")
			}
			if code == 1 && !strings.Contains(errs, "+32.7%") {
				t.Errorf("the error should name the largest regression: %s", errs)
			}
		})
	}
}

// TestInterfaceDiffBadInput: a missing or non-BPF file is an input error
// (exit 2) on one line that names the file.
func TestInterfaceDiffBadInput(t *testing.T) {
	text := filepath.Join(t.TempDir(), "notes.o")
	if err := os.WriteFile(text, []byte("not an ELF object\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	good := built(t, "flowcount")
	missing := filepath.Join(t.TempDir(), "missing.o")
	for _, c := range []struct {
		name string
		args []string
		file string
	}{
		{"missing old", []string{missing, good}, missing},
		{"missing new", []string{good, missing}, missing},
		{"not BPF", []string{good, text}, text},
		{"one file", []string{good}, ""},
		{"bad resolution", []string{"--resolution", "-1", good, good}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, errs, code := dpperf(t, append([]string{"interface", "diff"}, c.args...)...)
			if code != 2 {
				t.Fatalf("exit %d, want 2: %s", code, errs)
			}
			last := strings.TrimSpace(errs[strings.LastIndex(strings.TrimRight(errs, "\n"), "\n")+1:])
			if !strings.HasPrefix(last, "dpperf: ") || !strings.Contains(last, c.file) {
				t.Errorf("error line %q should name %q", last, c.file)
			}
		})
	}
}
