package symex

import (
	"slices"
	"strconv"
	"strings"
)

// The canonical text of a window of levels: its assertions and the
// definitions they use, every defined name renamed in order of appearance,
// so that two paths' windows compare as text (see lemma.go).

// window gives the canonical text of windows of the first n loaded levels.
type window struct {
	levels [][]string
	def    map[string]defAt // names the levels define
}

type defAt struct {
	level, line int
}

func (c *Checker) window(n int) *window {
	w := &window{levels: make([][]string, n), def: map[string]defAt{}}
	for i := range n {
		w.levels[i] = c.levels[i].text
		for j, line := range c.levels[i].text {
			if name := definedName(line); name != "" {
				w.def[name] = defAt{i, j}
			}
		}
	}
	return w
}

// body returns the line that defines name in the window.
func (w *window) body(name string) (string, bool) {
	d, ok := w.def[name]
	if !ok {
		return "", false
	}
	return w.levels[d.level][d.line], true
}

// text returns the assertions of levels [j, k) with the definitions they
// use, in the order the path made them, every defined name replaced by
// its rank of first appearance; "" when the window asserts nothing.
func (w *window) text(j, k int) string {
	at := make([]int, 0, k-j)
	for i := j; i < k; i++ {
		at = append(at, i)
	}
	return w.textOf(at)
}

// textOf is text for the levels at (ascending), which need not be
// contiguous.
func (w *window) textOf(at []int) string {
	var asserts []defAt
	var roots []string
	for _, i := range at {
		for l, line := range w.levels[i] {
			if strings.HasPrefix(line, "(assert ") {
				asserts = append(asserts, defAt{i, l})
				roots = append(roots, line)
			}
		}
	}
	if len(asserts) == 0 {
		return ""
	}
	need := uses(roots, w.body)
	lines := make([]defAt, 0, len(need)+len(asserts))
	for name := range need {
		lines = append(lines, w.def[name])
	}
	slices.SortFunc(lines, func(a, b defAt) int {
		if a.level != b.level {
			return a.level - b.level
		}
		return a.line - b.line
	})
	lines = append(lines, asserts...)
	rename := map[string]string{}
	var sb strings.Builder
	for i, d := range lines {
		if i > 0 {
			sb.WriteByte('\n')
		}
		sb.WriteString(canonical(w.levels[d.level][d.line], w.def, rename))
	}
	return sb.String()
}

// canonical rewrites line with every name in defs replaced by "k" and its
// rank of first appearance (kept in rename).
func canonical(line string, defs map[string]defAt, rename map[string]string) string {
	var sb strings.Builder
	start := -1
	flush := func(end int) {
		if start < 0 {
			return
		}
		tok := line[start:end]
		if _, ok := defs[tok]; ok {
			r, ok := rename[tok]
			if !ok {
				r = "k" + strconv.Itoa(len(rename))
				rename[tok] = r
			}
			tok = r
		}
		sb.WriteString(tok)
		start = -1
	}
	for i := 0; i < len(line); i++ {
		if isNameByte(line[i]) {
			if start < 0 {
				start = i
			}
			continue
		}
		flush(i)
		sb.WriteByte(line[i])
	}
	flush(len(line))
	return sb.String()
}

func isNameByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '_' || b == '#'
}

// uses returns the names that the SMT-LIB texts roots use, directly or
// through the definitions body gives (false: not a defined name).
func uses(roots []string, body func(name string) (string, bool)) map[string]bool {
	need := map[string]bool{}
	var walk func(text string)
	walk = func(text string) {
		for _, tok := range strings.FieldsFunc(text, func(r rune) bool { return r == ' ' || r == '(' || r == ')' }) {
			if need[tok] {
				continue
			}
			if b, ok := body(tok); ok {
				need[tok] = true
				walk(b)
			}
		}
	}
	for _, r := range roots {
		walk(r)
	}
	return need
}

// definedName returns the name a define-fun, declare-const or declare-fun
// line binds, or "".
func definedName(line string) string {
	for _, p := range []string{"(define-fun ", "(declare-const ", "(declare-fun "} {
		if rest, ok := strings.CutPrefix(line, p); ok {
			if i := strings.IndexByte(rest, ' '); i > 0 {
				return rest[:i]
			}
		}
	}
	return ""
}
