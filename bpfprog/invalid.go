package bpfprog

import (
	"errors"
	"fmt"

	"github.com/dpperf/dpperf/internal/fail"
)

// InvalidError says that a program breaks a rule the kernel enforces before
// it runs anything: an encoding its verifier rejects, a map it refuses to
// create, or an operation on a register of the wrong type. Such a program
// is bad input, never a failure of the analysis; errors wrapping one are
// input errors (exit 2).
type InvalidError struct {
	File    string // the object
	Program string
	Insn    int    // instruction index in Program.Insns, or -1 for a map
	Loc     string // source location "file.c:12" from BTF line info, if any
	Map     string // the map, for a map definition the kernel refuses
	Msg     string
}

func (e *InvalidError) Error() string {
	s := e.File + ": program " + e.Program
	switch {
	case e.Map != "":
		s += ", map " + e.Map
	case e.Insn >= 0:
		s += fmt.Sprintf(", insn %d", e.Insn)
		if e.Loc != "" {
			s += " (" + e.Loc + ")"
		}
	}
	return s + ": " + e.Msg
}

// Unwrap makes an invalid program an input error about its file, which
// the CLI turns into exit 2.
func (e *InvalidError) Unwrap() error {
	return &fail.InputError{File: e.File, Err: errors.New(e.Msg)}
}

// Invalid reports that instruction i breaks a rule of the kernel's
// verifier, naming the object, the program, the instruction and its
// source line.
func (p *Program) Invalid(i int, format string, args ...any) error {
	e := &InvalidError{File: p.File, Program: p.Name, Insn: i, Msg: fmt.Sprintf(format, args...)}
	if i >= 0 && i < len(p.Insns) {
		e.Loc, _ = p.Line(i)
	}
	return e
}

// IsInvalid reports whether err says the program is invalid, returning
// the InvalidError.
func IsInvalid(err error) (*InvalidError, bool) {
	var ie *InvalidError
	ok := errors.As(err, &ie)
	return ie, ok
}
