package cli

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dpperf/dpperf/internal/fail"
)

func TestParseInterspersed(t *testing.T) {
	var stderr bytes.Buffer
	fs := NewFlagSet("x", "x [flags] A B", &stderr)
	n := fs.Int("n", 0, "a number")
	var l List
	fs.Var(&l, "l", "repeatable")
	pos, err := Parse(fs, []string{"a", "-n", "3", "b", "-l", "p", "-l", "q", "--", "-c"})
	if err != nil {
		t.Fatal(err)
	}
	if *n != 3 || strings.Join(pos, " ") != "a b -c" || l.String() != "p,q" {
		t.Fatalf("n=%d pos=%q l=%q", *n, pos, l)
	}
}

func TestParseErrors(t *testing.T) {
	var stderr bytes.Buffer
	fs := NewFlagSet("x", "x [flags]", &stderr)
	fs.Int("n", 0, "a number")
	fs.String("s", "", Hidden)
	_, err := Parse(fs, []string{"--nope"})
	if fail.ExitCode(err) != 2 || !strings.Contains(err.Error(), "see 'dpperf x -h'") || stderr.Len() != 0 {
		t.Fatalf("bad flag: %v (exit %d), stderr %q", err, fail.ExitCode(err), stderr.String())
	}
	_, err = Parse(fs, []string{"-h"})
	if !errors.Is(err, flag.ErrHelp) || !strings.Contains(stderr.String(), "-n int") || strings.Contains(stderr.String(), "-s ") {
		t.Fatalf("-h: %v, listing %q", err, stderr.String())
	}
}

func TestRanges(t *testing.T) {
	defer func(r map[string][]Range) { Ranges = r }(Ranges)
	Ranges = map[string][]Range{"x": {AtLeast("n", 1), AboveUpTo("p", 0, 100), Above("d", 0)}}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-n", "1", "-p", "100", "-d", "1ms"}, ""},
		{[]string{"-n", "0"}, "--n must be at least 1, got 0"},
		{[]string{"-p", "0"}, "--p must be in (0, 100], got 0"},
		{[]string{"-p", "NaN"}, "--p must be in (0, 100], got NaN"},
		{[]string{"-d", "0s"}, "--d must be above 0, got 0s"},
	} {
		fs := NewFlagSet("x", "x", io.Discard)
		fs.Int("n", 1, "")
		fs.Float64("p", 50, "")
		fs.Duration("d", time.Second, "")
		_, err := Parse(fs, c.args)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
	}
	if got := Within("w", 60, 65535).Want(); got != "in [60, 65535]" {
		t.Errorf("Within: %q", got)
	}
}

func TestDeprecated(t *testing.T) {
	var stderr bytes.Buffer
	fs := NewFlagSet("x", "x", &stderr)
	out := fs.String("write", "", "")
	Deprecated(fs, "out", "--write", &stderr, false, func(v string) error { *out = v; return nil })
	if _, err := Parse(fs, []string{"--out", "f"}); err != nil || *out != "f" || !strings.Contains(stderr.String(), "--out is deprecated; use --write") {
		t.Fatalf("%v %q %q", err, *out, stderr.String())
	}
}

func TestOutputFileOnlyOnSuccess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.txt")
	fs := NewFlagSet("x", "x", io.Discard)
	o := AddOutput(fs, "x.md")
	if _, err := Parse(fs, []string{"-o", path, "--json"}); err != nil || !o.JSON || o.File != path {
		t.Fatalf("%v %+v", err, o)
	}
	boom := errors.New("boom")
	if err := o.Write(io.Discard, func(w io.Writer) error { io.WriteString(w, "half"); return boom }); !errors.Is(err, boom) {
		t.Fatalf("Write = %v", err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("a failed report left %s: %v", path, err)
	}
	if err := o.Write(io.Discard, func(w io.Writer) error { return WriteJSON(w, map[string]int{"a": 1}) }); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "{\n  \"a\": 1\n}\n" {
		t.Fatalf("file holds %q", b)
	}
	var stdout bytes.Buffer
	o.File = ""
	if err := o.Write(&stdout, func(w io.Writer) error { _, err := io.WriteString(w, "x"); return err }); err != nil || stdout.String() != "x" {
		t.Fatalf("stdout: %v %q", err, stdout.String())
	}
}

func TestStatusLineOffTerminal(t *testing.T) {
	show, done := StatusLine(&bytes.Buffer{})
	if show != nil {
		t.Fatal("a status line on a buffer")
	}
	done()
}
