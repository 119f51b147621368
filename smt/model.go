package smt

import (
	"errors"
	"fmt"
	"strings"
)

// Model is an Env over the model of a solver's last Sat check: it asks the
// solver for the value of a free symbol, or of a function at arguments,
// the first time a term needs it, and keeps the answer. It serves until
// the next check; the caller sees to that (a Model does not notice).
type Model struct {
	s     *Solver
	known map[string]Value
	// Asked counts the values asked of the solver.
	Asked int
}

// Model returns an evaluator of terms in the model of the last Sat check.
func (s *Solver) Model() *Model { return &Model{s: s, known: map[string]Value{}} }

// Symbol returns the model's value of a constant the solver declared.
func (m *Model) Symbol(name string) (Value, error) { return m.ask(name) }

// Apply returns the model's value of a function at arguments.
func (m *Model) Apply(name string, args []Value) (Value, error) {
	var b strings.Builder
	b.WriteString("(" + name)
	for _, a := range args {
		if a.kind == kindArray {
			return Value{}, unsupported("function of an array")
		}
		b.WriteString(" " + a.String())
	}
	b.WriteString(")")
	return m.ask(b.String())
}

// ask returns the value of a closed term, from the solver the first time.
func (m *Model) ask(term string) (Value, error) {
	if v, ok := m.known[term]; ok {
		return v, nil
	}
	m.Asked++
	ans, err := m.s.evalTerm(term)
	if err != nil {
		return Value{}, err
	}
	v, err := Eval(ans, closedEnv{})
	if err != nil {
		return Value{}, err
	}
	m.known[term] = v
	return v, nil
}

// ParseValue reads a value as a solver prints it in a model: a literal, or
// for an array, stores into a constant array, possibly under lets.
func ParseValue(text string) (Value, error) {
	e, err := ParseExpr(text)
	if err != nil {
		return Value{}, err
	}
	return Eval(e, closedEnv{})
}

// closedEnv is the Env of a term that names no free symbol.
type closedEnv struct{}

var errFree = errors.New("smt: a model value names a free symbol")

func (closedEnv) Symbol(name string) (Value, error) {
	return Value{}, fmt.Errorf("%w (%s): %w", ErrUnsupported, clip(name), errFree)
}

func (closedEnv) Apply(name string, _ []Value) (Value, error) {
	return Value{}, fmt.Errorf("%w (%s): %w", ErrUnsupported, clip(name), errFree)
}
