package smt

import (
	"context"
	"fmt"
	"strings"
)

// readSexp reads one s-expression answer, which may span several lines.
// Atoms come back as strings, lists as []any. Each line is awaited as
// long as a check (the solver's timeout plus Grace).
func (s *Solver) readSexp() (any, error) {
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
	v, rest, err := parseSexp(b.String())
	if err != nil {
		return nil, fmt.Errorf("smt solver: %w", err)
	}
	if strings.TrimSpace(rest) != "" {
		return nil, fmt.Errorf("smt solver: trailing text %q", rest)
	}
	return v, nil
}

// parseSexp parses one s-expression at the start of text.
func parseSexp(text string) (any, string, error) {
	text = strings.TrimLeft(text, " \t\r\n")
	switch {
	case text == "":
		return nil, "", fmt.Errorf("unexpected end of answer")
	case text[0] == '(':
		var list []any
		text = text[1:]
		for {
			text = strings.TrimLeft(text, " \t\r\n")
			if text == "" {
				return nil, "", fmt.Errorf("unbalanced parentheses")
			}
			if text[0] == ')' {
				if list == nil {
					list = []any{}
				}
				return list, text[1:], nil
			}
			v, rest, err := parseSexp(text)
			if err != nil {
				return nil, "", err
			}
			list, text = append(list, v), rest
		}
	case text[0] == ')':
		return nil, "", fmt.Errorf("unexpected )")
	case text[0] == '|':
		end := strings.IndexByte(text[1:], '|')
		if end < 0 {
			return nil, "", fmt.Errorf("unterminated |symbol|")
		}
		return text[1 : end+1], text[end+2:], nil
	case text[0] == '"':
		end := strings.IndexByte(text[1:], '"')
		if end < 0 {
			return nil, "", fmt.Errorf("unterminated string")
		}
		return text[:end+2], text[end+2:], nil
	}
	end := strings.IndexAny(text, " \t\r\n()")
	if end < 0 {
		end = len(text)
	}
	return text[:end], text[end:], nil
}

// sexpString prints an s-expression back as text.
func sexpString(v any) string {
	list, ok := v.([]any)
	if !ok {
		return v.(string)
	}
	parts := make([]string, len(list))
	for i, x := range list {
		parts[i] = sexpString(x)
	}
	return "(" + strings.Join(parts, " ") + ")"
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
