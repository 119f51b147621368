// Package fail classifies dpperf's errors into exit codes: usage and input
// errors (exit 2), unmet requirements such as --require (exit 1), and every
// other failure (exit 3).
package fail

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
)

// Exit codes of the dpperf command.
const (
	ExitOK          = 0
	ExitRequirement = 1
	ExitInput       = 2
	ExitOther       = 3
	// ExitNeedsRoot: a part of the work needs root and was not done
	// (what could be done without it was printed).
	ExitNeedsRoot = 4
	// ExitInterrupted is the shell's code for a process ended by SIGINT:
	// the run was stopped (Ctrl-C, SIGTERM) and wrote what it had.
	ExitInterrupted = 130
)

// InputError is a problem with what the user gave: a flag, an argument or
// the content of an input file. File names the file when there is one.
type InputError struct {
	File string
	Err  error
}

func (e *InputError) Error() string {
	if e.File == "" {
		return e.Err.Error()
	}
	return e.File + ": " + e.Err.Error()
}

func (e *InputError) Unwrap() error { return e.Err }

// Input marks err as an input error about file (which may be empty).
// It returns nil for a nil err.
func Input(file string, err error) error {
	if err == nil {
		return nil
	}
	var ie *InputError
	if errors.As(err, &ie) && (ie.File == file || file == "") {
		return err
	}
	return &InputError{File: file, Err: err}
}

// Inputf is Input with a formatted message.
func Inputf(file, format string, args ...any) error {
	return &InputError{File: file, Err: fmt.Errorf(format, args...)}
}

// Usagef reports a usage error (bad flags or arguments).
func Usagef(format string, args ...any) error {
	return &InputError{Err: fmt.Errorf(format, args...)}
}

// RequirementError says that an analysis ran but its result did not meet a
// threshold the user asked for (--require, --fail-above).
type RequirementError struct{ Msg string }

func (e *RequirementError) Error() string { return e.Msg }

// Requirementf builds a RequirementError.
func Requirementf(format string, args ...any) error {
	return &RequirementError{Msg: fmt.Sprintf(format, args...)}
}

// NeedsRootError says that a step needs root privileges (BPF programs,
// tracepoints, BPF_PROG_TEST_RUN) and was not done.
type NeedsRootError struct{ Msg string }

func (e *NeedsRootError) Error() string { return e.Msg }

// NeedsRootf builds a NeedsRootError.
func NeedsRootf(format string, args ...any) error {
	return &NeedsRootError{Msg: fmt.Sprintf(format, args...)}
}

// ExitCode maps an error to the process exit code.
func ExitCode(err error) int {
	var ie *InputError
	var re *RequirementError
	var nr *NeedsRootError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return ExitOK
	case errors.As(err, &re):
		return ExitRequirement
	case errors.As(err, &nr):
		return ExitNeedsRoot
	case errors.As(err, &ie):
		return ExitInput
	case errors.Is(err, context.Canceled):
		return ExitInterrupted
	default:
		return ExitOther
	}
}

// Guard runs f and turns a panic in it into an error of dpperf's own
// (exit 3) that says where it happened, so that no input ends the process
// with a stack trace. Goroutines that analyse input run their work under
// it.
func Guard(f func() error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &InternalError{Value: v, Where: panicSite()}
		}
	}()
	return f()
}

// InternalError is a panic caught by Guard: a defect of dpperf.
type InternalError struct {
	Value any
	Where string // function and line of the panic, "" when unknown
}

func (e *InternalError) Error() string {
	if e.Where == "" {
		return fmt.Sprintf("internal error: %v", e.Value)
	}
	return fmt.Sprintf("internal error: %v (in %s)", e.Value, e.Where)
}

// panicSite names the innermost frame of the panicking goroutine outside
// the runtime and this package.
func panicSite() string {
	pcs := make([]uintptr, 32)
	n := runtime.Callers(3, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	for {
		f, more := frames.Next()
		if !strings.HasPrefix(f.Function, "runtime.") && !strings.Contains(f.Function, "internal/fail.") {
			return fmt.Sprintf("%s, %s:%d", f.Function, filepath.Base(f.File), f.Line)
		}
		if !more {
			return ""
		}
	}
}
