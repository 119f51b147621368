package smt

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func start(t *testing.T, cfg Config) *Solver {
	t.Helper()
	s, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestFig2Contradiction: a packet's EtherType cannot be IPv4 and IPv6 at
// once, and the IPv6 path needs at least 100 bytes.
func TestFig2Contradiction(t *testing.T) {
	ctx := context.Background()
	s := start(t, Config{Timeout: 5 * time.Second})
	for _, d := range []string{
		"(declare-const pkt (Array (_ BitVec 32) (_ BitVec 8)))",
		"(declare-const len (_ BitVec 32))",
		"(define-fun ethtype () (_ BitVec 16) (concat (select pkt #x0000000c) (select pkt #x0000000d)))",
	} {
		if err := s.Declare(d); err != nil {
			t.Fatal(err)
		}
	}
	s.Assert("(bvuge len #x00000064)")
	s.Push()
	s.Assert("(= ethtype #x0800)")
	s.Assert("(= ethtype #x86dd)")
	if r, err := s.Check(ctx); err != nil || r != Unsat {
		t.Fatalf("IPv4 and IPv6: %v %v, want unsat", r, err)
	}
	s.Pop()
	s.Push()
	s.Assert("(= ethtype #x86dd)")
	if r, err := s.Check(ctx); err != nil || r != Sat {
		t.Fatalf("IPv6: %v %v, want sat", r, err)
	}
	v, err := s.Value("ethtype")
	if err != nil || v != "#x86dd" {
		t.Fatalf("ethtype = %q, %v", v, err)
	}
	l, err := s.Value("(bvuge len #x00000064)")
	if err != nil || l != "true" {
		t.Fatalf("len >= 100: %q, %v", l, err)
	}
	s.Pop()
	if s.Depth() != 0 || s.Pop() == nil {
		t.Fatal("pop below zero accepted")
	}
}

func TestSolverErrorsSurface(t *testing.T) {
	s := start(t, Config{})
	s.Assert("(= undeclared 1)")
	if _, err := s.Check(context.Background()); err == nil || !strings.Contains(err.Error(), "smt solver") {
		t.Fatalf("error %v", err)
	}
}

// TestTimeoutIsUnknown: a hard query with a tiny timeout answers unknown,
// which callers must treat as possibly satisfiable. z3 looks at its clock
// only between steps: on a busy machine it may overrun a millisecond by
// more than the grace period, and the check then ends as stalled.
func TestTimeoutIsUnknown(t *testing.T) {
	s := start(t, Config{Timeout: time.Millisecond})
	s.Declare("(declare-const a (_ BitVec 64))")
	s.Declare("(declare-const b (_ BitVec 64))")
	// Factor a 62-bit semiprime: far beyond a millisecond.
	s.Assert("(= (bvmul a b) #x3ffffffb80000005)")
	s.Assert("(bvugt a #x0000000000000001)")
	s.Assert("(bvugt b #x0000000000000001)")
	s.Assert("(bvult a #x0000000100000000)")
	s.Assert("(bvult b #x0000000100000000)")
	r, err := s.Check(context.Background())
	if (err != nil && !errors.Is(err, ErrStalled)) || r != Unknown {
		t.Fatalf("%v %v, want unknown", r, err)
	}
}

func TestCancelKillsSolver(t *testing.T) {
	s := start(t, Config{})
	s.Declare("(declare-const a (_ BitVec 64))")
	s.Declare("(declare-const b (_ BitVec 64))")
	s.Assert("(= (bvmul a b) #x3ffffffb80000005)")
	s.Assert("(bvugt a #x0000000000000001)")
	s.Assert("(bvugt b #x0000000000000001)")
	s.Assert("(bvult a #x0000000100000000)")
	s.Assert("(bvult b #x0000000100000000)")
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := s.Check(ctx); err == nil {
		t.Fatal("cancelled check returned no error")
	}
}

func TestMissingSolver(t *testing.T) {
	if _, err := Start(Config{Command: []string{"no-such-solver-binary"}}); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("error %v", err)
	}
}

func BenchmarkPushAssertCheckPop(b *testing.B) {
	s, err := Start(Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	s.Declare("(declare-const pkt (Array (_ BitVec 32) (_ BitVec 8)))")
	ctx := context.Background()
	for b.Loop() {
		s.Push()
		s.Assert("(= (select pkt #x0000000c) #x86)")
		if r, err := s.Check(ctx); err != nil || r != Sat {
			b.Fatal(r, err)
		}
		s.Pop()
	}
}

// silent is a solver that reads the commands and answers nothing, as z3
// does when it ignores its :timeout.
var silent = []string{"sh", "-c", "cat >/dev/null"}

// TestStalledSolverIsStopped: a solver that never answers is killed once
// its timeout and the grace period have passed, and the check reports
// ErrStalled instead of waiting for ever.
func TestStalledSolverIsStopped(t *testing.T) {
	for _, c := range []struct {
		name string
		ask  func(s *Solver) error
	}{
		{"check", func(s *Solver) error { _, err := s.Check(context.Background()); return err }},
		{"check-for", func(s *Solver) error { _, err := s.CheckFor(context.Background(), 50*time.Millisecond); return err }},
		{"get-value", func(s *Solver) error { _, err := s.Value("x"); return err }},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := start(t, Config{Command: silent, Timeout: 100 * time.Millisecond})
			s.Declare("(declare-const x (_ BitVec 8))")
			// Without the watchdog the call would never return (the
			// package's test timeout would end the run).
			err := c.ask(s)
			if !errors.Is(err, ErrStalled) {
				t.Fatalf("error %v, want ErrStalled", err)
			}
			if s.cmd.ProcessState == nil {
				t.Error("solver process not reaped")
			}
			if _, err := s.Check(context.Background()); err == nil {
				t.Error("a stopped solver answered")
			}
		})
	}
}

// TestNoWatchdogWithoutTimeout: with no timeout a check waits as long as
// the solver needs; only the caller's context ends it.
func TestNoWatchdogWithoutTimeout(t *testing.T) {
	s := start(t, Config{Command: silent})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if _, err := s.Check(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error %v, want the context's deadline", err)
	}
}

func TestClosing(t *testing.T) {
	for s, want := range map[string]int{
		"(a)":         2,
		"(a (b c)) d": 8,
		"((a)":        -1,
		"a (b)":       -1,
		"":            -1,
	} {
		if got := Closing(s); got != want {
			t.Errorf("Closing(%q) = %d, want %d", s, got, want)
		}
	}
}
