package perfiface

import (
	"fmt"
	"strings"
)

// sx is an S-expression of the SMT-LIB text symex writes: an atom or a
// list. The text is ours (a small, regular subset of SMT-LIB2), so a few
// dozen lines parse it; a general SMT-LIB library would bring sorts,
// attributes and quoting that never occur here.
type sx struct {
	atom string
	list []*sx
}

func (s *sx) isAtom() bool { return s.list == nil }

// head returns the operator of a list: its first atom, or for an indexed
// operator such as ((_ extract 7 0) x) the index's name ("extract").
func (s *sx) head() string {
	if s.isAtom() || len(s.list) == 0 {
		return ""
	}
	h := s.list[0]
	if h.isAtom() {
		return h.atom
	}
	if len(h.list) >= 2 && h.list[0].atom == "_" {
		return h.list[1].atom
	}
	return ""
}

// index returns the numeric indices of an indexed operator: 7 and 0 of
// (_ extract 7 0).
func (s *sx) index() []int {
	h := s.list[0]
	var out []int
	for _, a := range h.list[2:] {
		var n int
		fmt.Sscan(a.atom, &n)
		out = append(out, n)
	}
	return out
}

// parseSX parses one S-expression from the start of text.
func parseSX(text string) (*sx, error) {
	p := &sxParser{s: text}
	e, err := p.expr()
	if err != nil {
		return nil, fmt.Errorf("smt text %q: %w", clip(text, 60), err)
	}
	return e, nil
}

type sxParser struct {
	s   string
	pos int
}

func (p *sxParser) skip() {
	for p.pos < len(p.s) && (p.s[p.pos] == ' ' || p.s[p.pos] == '\n' || p.s[p.pos] == '\t') {
		p.pos++
	}
}

func (p *sxParser) expr() (*sx, error) {
	p.skip()
	if p.pos >= len(p.s) {
		return nil, fmt.Errorf("unexpected end")
	}
	if p.s[p.pos] == ')' {
		return nil, fmt.Errorf("unexpected ')' at %d", p.pos)
	}
	if p.s[p.pos] != '(' {
		start := p.pos
		for p.pos < len(p.s) && !strings.ContainsRune(" \n\t()", rune(p.s[p.pos])) {
			p.pos++
		}
		return &sx{atom: p.s[start:p.pos]}, nil
	}
	p.pos++
	e := &sx{list: []*sx{}}
	for {
		p.skip()
		if p.pos >= len(p.s) {
			return nil, fmt.Errorf("unclosed '('")
		}
		if p.s[p.pos] == ')' {
			p.pos++
			return e, nil
		}
		k, err := p.expr()
		if err != nil {
			return nil, err
		}
		e.list = append(e.list, k)
	}
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
