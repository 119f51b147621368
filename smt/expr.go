package smt

import (
	"errors"
	"fmt"
)

// Expr is a parsed SMT-LIB term, read once so that it can be evaluated in
// many models (see Eval): an atom (a symbol or a literal) or a list.
type Expr struct {
	Atom string  // set for an atom
	List []*Expr // the elements of a list; nil for an atom
	// Read once by the parser so that an evaluation does not read it
	// again: an atom's literal value, a list's built-in operation, an
	// indexed head's indices. Terms built by hand leave them unset and
	// are read as they are evaluated.
	lit *Value
	op  *builtin
	idx []int
}

// ParseExpr parses one term that makes up the whole of text.
func ParseExpr(text string) (*Expr, error) {
	p := exprParser{text: text}
	e, err := p.expr(0)
	if err != nil {
		return nil, err
	}
	p.space()
	if p.i < len(p.text) {
		return nil, fmt.Errorf("smt: trailing text after term: %q", clip(p.text[p.i:]))
	}
	return e, nil
}

// maxExprDepth bounds the nesting ParseExpr accepts, so that hostile text
// cannot exhaust the stack.
const maxExprDepth = 10000

var errEndOfTerm = errors.New("smt: unexpected end of term")

type exprParser struct {
	text string
	i    int
}

func (p *exprParser) space() {
	for p.i < len(p.text) {
		switch p.text[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		case ';': // a comment runs to the end of the line
			for p.i < len(p.text) && p.text[p.i] != '\n' {
				p.i++
			}
		default:
			return
		}
	}
}

func (p *exprParser) expr(depth int) (*Expr, error) {
	if depth > maxExprDepth {
		return nil, errors.New("smt: term nested too deeply")
	}
	p.space()
	if p.i >= len(p.text) {
		return nil, errEndOfTerm
	}
	switch c := p.text[p.i]; c {
	case '(':
		p.i++
		e := &Expr{List: []*Expr{}}
		for {
			p.space()
			if p.i >= len(p.text) {
				return nil, errEndOfTerm
			}
			if p.text[p.i] == ')' {
				p.i++
				e.resolve()
				return e, nil
			}
			x, err := p.expr(depth + 1)
			if err != nil {
				return nil, err
			}
			e.List = append(e.List, x)
		}
	case ')':
		return nil, fmt.Errorf("smt: unexpected ) at %d", p.i)
	case '|', '"':
		end := p.i + 1
		for end < len(p.text) && p.text[end] != c {
			end++
		}
		if end >= len(p.text) {
			return nil, errEndOfTerm
		}
		a := p.text[p.i : end+1]
		p.i = end + 1
		if c == '|' {
			a = a[1 : len(a)-1] // |x| and x are the same symbol
		}
		return &Expr{Atom: a}, nil
	}
	start := p.i
	for p.i < len(p.text) && !isAtomEnd(p.text[p.i]) {
		p.i++
	}
	e := &Expr{Atom: p.text[start:p.i]}
	if v, ok := literal(e.Atom); ok {
		e.lit = &v
	}
	return e, nil
}

// resolve reads what an evaluation of a parsed list needs from its head:
// a literal (_ bvN W), the built-in operation its head names, or an
// indexed head's indices.
func (e *Expr) resolve() {
	if len(e.List) == 0 {
		return
	}
	head := e.List[0]
	if head.Atom == "_" {
		if v, err := bvLiteral(e); err == nil {
			e.lit = &v
		}
		return
	}
	if head.List == nil {
		if op, ok := builtins[head.Atom]; ok {
			e.op = &op
		}
		return
	}
	if h := head.List; len(h) >= 2 && h[0].Atom == "_" {
		if idx, ok := indices(h[2:]); ok {
			head.idx = idx // a bad index is reported when evaluated
		}
	}
}

func isAtomEnd(b byte) bool {
	return b == ' ' || b == '\t' || b == '\n' || b == '\r' || b == '(' || b == ')' || b == ';' || b == '|' || b == '"'
}

// String writes the term back as SMT-LIB text.
func (e *Expr) String() string {
	if e.List == nil {
		return e.Atom
	}
	b := []byte{'('}
	for i, x := range e.List {
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, x.String()...)
	}
	return string(append(b, ')'))
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}
