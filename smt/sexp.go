package smt

import (
	"context"
	"fmt"
	"strings"
)

// readSexp reads one s-expression answer, which may span several lines,
// as a term (ParseExpr). Each line is awaited as long as a check (the
// solver's timeout plus Grace).
func (s *Solver) readSexp() (*Expr, error) {
	var b strings.Builder
	depth := 0
	for {
		l, err := s.readLine(context.Background(), s.timeout)
		if err != nil {
			return nil, err
		}
		b.WriteString(l)
		b.WriteByte(' ')
		depth += strings.Count(l, "(") - strings.Count(l, ")")
		if depth <= 0 {
			break
		}
	}
	e, err := ParseExpr(b.String())
	if err != nil {
		return nil, fmt.Errorf("smt solver: answer: %w", err)
	}
	return e, nil
}

// Closing returns the index of the parenthesis that closes the one at
// s[0], or -1 when s does not start with a balanced one.
func Closing(s string) int {
	if !strings.HasPrefix(s, "(") {
		return -1
	}
	depth := 0
	for i, c := range s {
		switch c {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}
