package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/dpperf/dpperf/internal/golden"

	"github.com/dpperf/dpperf/internal/fail"
	"github.com/dpperf/dpperf/internal/testobj"
)

// dpperf runs the command in-process and returns stdout, stderr and the
// exit code main would use.
func dpperf(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	err := run(context.Background(), args, &out, &errb)
	if err != nil {
		errb.WriteString("dpperf: " + err.Error() + "\n")
	}
	return out.String(), errb.String(), fail.ExitCode(err)
}

// built is the path of a compiled example relative to this package, so that
// reports do not depend on where the repository is checked out.
func built(t *testing.T, name string) string {
	testobj.Built(t, name)
	return filepath.Join("..", "..", "build", "bpf", name+".o")
}

func TestBoundGoldenExamples(t *testing.T) {
	cases := []struct {
		golden string
		args   []string
	}{
		{"fig2.txt", []string{"bound", "--paths", "4", "fig2"}},
		{"fig2.json", []string{"bound", "--json", "--paths", "2", "fig2"}},
		{"parser.txt", []string{"bound", "--paths", "3", "parser"}},
		{"parser-x86.txt", []string{"bound", "--target", "x86-64", "parser"}},
		{"counter.txt", []string{"bound", "counter"}},
		{"loop.txt", []string{"bound", "loop"}},
		{"call.txt", []string{"bound", "call"}},
		{"legacy.txt", []string{"bound", "--json", "legacy"}},
		{"explode.txt", []string{"bound", "explode"}},
		{"test_xdp_noinline_v4.txt", []string{"bound", "--program", "balancer_ingress_v4", "test_xdp_noinline"}},
		{"test_xdp_noinline_v6.txt", []string{"bound", "--program", "balancer_ingress_v6", "test_xdp_noinline"}},
	}
	for _, c := range cases {
		t.Run(c.golden, func(t *testing.T) {
			args := append([]string{"bound", "--naive"}, c.args[1:]...)
			if !slices.Contains(args, "--target") {
				args = append([]string{"bound", "--naive", "--target", "nfp-agilio-cx"}, c.args[1:]...)
			}
			args[len(args)-1] = built(t, args[len(args)-1])
			out, errs, code := dpperf(t, args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			golden.CheckString(t, "bound/"+c.golden, out)
		})
	}
}

// TestBoundGoldenLibXDP bounds every XDP program that Debian's libxdp1
// installs: third-party objects no one here wrote.
func TestBoundGoldenLibXDP(t *testing.T) {
	for _, obj := range testobj.LibXDP(t) {
		base := strings.TrimSuffix(filepath.Base(obj), ".o")
		if base == "xdpdump_bpf" {
			continue // fentry/fexit tracing programs only: checked in TestBoundErrors
		}
		t.Run(base, func(t *testing.T) {
			args := []string{"bound", "--naive", "--target", "nfp-agilio-cx", obj}
			if base == "xdp-dispatcher" {
				args = append(args, "--program", "xdp_dispatcher")
			}
			out, errs, code := dpperf(t, args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			golden.CheckString(t, "bound/libxdp/"+base+".txt", out)
		})
	}
}

func TestTargetsList(t *testing.T) {
	out, _, code := dpperf(t, "targets")
	if code != 0 || !strings.Contains(out, "nfp-agilio-cx") || !strings.Contains(out, "x86-64") {
		t.Fatalf("exit %d, output:\n%s", code, out)
	}
	out, _, code = dpperf(t, "targets", "nfp-agilio-cx")
	if code != 0 || !strings.Contains(out, "capacity: 40e9") {
		t.Fatalf("exit %d, output:\n%s", code, out)
	}
}

func TestBoundErrors(t *testing.T) {
	notBPF := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(notBPF, []byte("just text\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fig2 := built(t, "fig2")
	noinline := built(t, "test_xdp_noinline")
	cases := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"bound"}, 2, "want one object file"},
		{[]string{"bound", "/nonexistent.o"}, 2, "/nonexistent.o: read object"},
		{[]string{"bound", notBPF}, 2, "not a BPF ELF object"},
		{[]string{"bound", noinline}, 2, "choose one with --program"},
		{[]string{"bound", "--program", "nope", fig2}, 2, `no program "nope"`},
		{[]string{"bound", "--target", "nope", fig2}, 2, `unknown target "nope"`},
		{[]string{"bound", "--target", "/nonexistent.yaml", fig2}, 2, "/nonexistent.yaml"},
		{[]string{"bound", "--require", "fast", fig2}, 2, "bad rate"},
		{[]string{"bound", "--paths", "0", fig2}, 2, "--paths"},
		{[]string{"bound", "--memory", "-1", fig2}, 2, "--memory"},
		{[]string{"bound", "--bogus", fig2}, 2, "flag provided but not defined"},
		{[]string{"bound", "--target", "nfp-agilio-cx", "--require", "100Mpps", fig2}, 1, "below the required 100 Mpkt/s"},
		{[]string{"bound", "--target", "nfp-agilio-cx", "--require", "10Gbit/s", fig2}, 0, ""},
		{[]string{"bound", filepath.Join(testobj.LibXDPDir, "xdpdump_bpf.o"), "--program", "trace_on_entry"}, 2, "bound analyses packet programs"},
		{[]string{"nosuchcommand"}, 2, "unknown subcommand"},
		{[]string{}, 2, "no subcommand"},
	}
	for _, c := range cases {
		_, errs, code := dpperf(t, c.args...)
		if code != c.code || !strings.Contains(errs, c.msg) {
			t.Errorf("dpperf %s: exit %d, stderr %q; want exit %d and %q", strings.Join(c.args, " "), code, errs, c.code, c.msg)
		}
		if n := strings.Count(strings.TrimSpace(errs), "\n"); c.code == 2 && n > 0 && !strings.Contains(errs, "Usage:") {
			t.Errorf("dpperf %s: error is not one line: %q", strings.Join(c.args, " "), errs)
		}
	}
}

func TestBadTargetFile(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	data, _ := os.ReadFile(filepath.Join("..", "..", "target", "targets", "x86-64.yaml"))
	if err := os.WriteFile(bad, bytes.Replace(data, []byte("alu64: {cpu: 0.3}"), []byte("alu64: {gpu: 0.3}"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errs, code := dpperf(t, "bound", "--target", bad, built(t, "fig2"))
	if code != 2 || !strings.Contains(errs, bad) || !strings.Contains(errs, `unknown component "gpu"`) || !strings.Contains(errs, "line ") {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
}

func TestHelpAndVersion(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"--help"}, {"help", "bound"}, {"bound", "-h"}, {"version"}} {
		out, errs, code := dpperf(t, args...)
		if code != 0 || out+errs == "" {
			t.Errorf("dpperf %v: exit %d", args, code)
		}
	}
}

// TestVersion: --version and version print the same line, with the Go
// toolchain; help documents every exit code, 130 and 4 included.
func TestVersion(t *testing.T) {
	a, _, code := dpperf(t, "--version")
	b, _, code2 := dpperf(t, "version")
	if code != 0 || code2 != 0 || a != b || !strings.HasPrefix(a, "dpperf ") || !strings.Contains(a, runtime.Version()) {
		t.Errorf("--version %q (exit %d), version %q (exit %d)", a, code, b, code2)
	}
	help, _, _ := dpperf(t, "help")
	for _, c := range []string{"  0 ", "  1 ", "  2 ", "  3 ", "  4 ", "  130 "} {
		if !strings.Contains(help, c) {
			t.Errorf("help does not document exit code %q:\n%s", strings.TrimSpace(c), help)
		}
	}
}
