package smt

import (
	"context"
	"strings"
	"testing"
)

// TestLazyDefinitions: a definition reaches the solver only when a command
// uses it, after the definitions it uses; a pop forgets the definitions
// given in its scope and sends again, when needed, those sent in it.
func TestLazyDefinitions(t *testing.T) {
	var log strings.Builder
	s, err := Start(Config{LazyDefinitions: true, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.Send("(declare-const x (_ BitVec 8))",
		"(define-fun unused () (_ BitVec 8) (bvmul x #x03))",
		"(define-fun y () (_ BitVec 8) (bvadd x #x01))",
		"(define-fun z () Bool (= y #x06))"))
	must(s.Push())
	must(s.Send("(define-fun w () (_ BitVec 8) (bvadd y #x02))", "(assert z)"))
	if res, err := s.Check(ctx); err != nil || res != Sat {
		t.Fatalf("check: %v %v", res, err)
	}
	if v, err := s.Value("w"); err != nil || v != "#x08" {
		t.Fatalf("w = %q, %v; want #x08", v, err)
	}
	sent := log.String()
	if strings.Contains(sent, "unused") {
		t.Error("a definition no command used was sent")
	}
	if strings.Index(sent, "(define-fun y ") > strings.Index(sent, "(define-fun z ") {
		t.Error("z was sent before the y it uses")
	}
	must(s.Pop())
	// y and z were sent in the popped scope: the solver forgot them, and
	// w, given there, is gone.
	log.Reset()
	must(s.Send("(assert (= y #x03))"))
	if res, err := s.Check(ctx); err != nil || res != Sat {
		t.Fatalf("check after pop: %v %v", res, err)
	}
	if v, err := s.Value("x"); err != nil || v != "#x02" {
		t.Fatalf("x = %q, %v; want #x02", v, err)
	}
	if !strings.Contains(log.String(), "(define-fun y ") {
		t.Error("y was not sent again after the pop")
	}
	if s.lazy.defs["w"] != nil {
		t.Error("w outlived the scope it was given in")
	}
}
