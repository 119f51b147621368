package symex

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dpperf/dpperf/smt"
)

// Programs branch on the same facts again and again: a parser with
// optional headers (VLAN tags of two kinds, IPv6 extension headers) reaches
// its later checks along many paths that differ only in which equivalent
// side of an early branch they took. When a later contradiction does not
// involve those early choices, every such path is refuted separately, and
// their number grows with the product of the early choices.
//
// A lemma remembers why a path prefix was refuted, in a form that other
// paths can be tested against without the solver: the assertions of a
// window of the prefix's last levels (edges j..k-1) that are contradictory
// on their own, together with the definitions those assertions use, with
// every name the path defined renamed in order of appearance. That text is
// a formula over the program's inputs (packet, length, map contents) and
// the solver has proven it unsatisfiable. Another path whose levels over
// the same edges give the same text asserts that formula (under other
// names) among others, and is refuted too. The text is compared exactly,
// so nothing is assumed about the paths' states: a different earlier path
// that changes any definition the window uses gives a different text, and
// the path goes to the solver as before.

// Lemmas is a store of refuted windows shared by the Checkers of a search.
// The zero value is ready; it is safe for concurrent use.
type Lemmas struct {
	mu     sync.Mutex
	byLast map[int32][]lemma // by the window's last edge
	n      int
	size   int // bytes of text held
}

type lemma struct {
	edges []int32 // the window, a run of a path's edges
	text  string  // the window's formula in canonical names
}

// maxLemmaBytes bounds the text a store holds; past it, nothing more is
// learned (what was learned still prunes).
const maxLemmaBytes = 64 << 20

// Len returns the number of lemmas held.
func (ls *Lemmas) Len() int {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return ls.n
}

func (ls *Lemmas) add(edges []int32, text string) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.size+len(text) > maxLemmaBytes {
		return
	}
	last := edges[len(edges)-1]
	for _, l := range ls.byLast[last] {
		if l.text == text && slices.Equal(l.edges, edges) {
			return
		}
	}
	if ls.byLast == nil {
		ls.byLast = map[int32][]lemma{}
	}
	ls.byLast[last] = append(ls.byLast[last], lemma{slices.Clone(edges), text})
	ls.n++
	ls.size += len(text)
}

// candidates returns the lemmas whose window ends with edge e.
func (ls *Lemmas) candidates(e int32) []lemma {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return ls.byLast[e]
}

// refutedByLemma returns the length of the shortest prefix of the loaded
// path that a lemma refutes, or 0.
func (c *Checker) refutedByLemma() int {
	ls := c.opts.Lemmas
	if ls == nil {
		return 0
	}
	var w *window
	texts := map[[2]int]string{}
	for i, e := range c.path {
		for _, l := range ls.candidates(e) {
			j := i + 1 - len(l.edges)
			if j < 0 || !slices.Equal(c.path[j:i+1], l.edges) {
				continue
			}
			key := [2]int{j, i + 1}
			t, ok := texts[key]
			if !ok {
				if w == nil {
					w = c.window(len(c.path))
				}
				t = w.text(j, i+1)
				texts[key] = t
			}
			if t == l.text {
				return i + 1
			}
		}
	}
	return 0
}

// learn finds, for a prefix of k levels the solver refuted, the shortest
// window of its last levels whose assertions are contradictory on their
// own, and stores it. It asks a second solver, so that the first keeps
// the path's levels. A window the second solver cannot decide within the
// time left is taken as satisfiable, which only makes the lemma longer.
func (c *Checker) learn(ctx context.Context, k int, budget time.Duration) error {
	ls := c.opts.Lemmas
	if ls == nil || k == 0 {
		return nil
	}
	if c.aux == nil {
		s, err := startSolver(c.opts, c.g.Maps)
		if err != nil {
			return err
		}
		c.aux = s
	}
	w := c.window(k)
	deadline := time.Now().Add(budget)
	// unsat returns the text of window [j, k) when the second solver
	// refutes it, or "".
	unsat := func(j int) (string, error) {
		left := time.Until(deadline)
		t := w.text(j, k)
		if left <= 0 || t == "" {
			return "", nil
		}
		if err := c.aux.Push(); err != nil {
			return "", err
		}
		if err := c.aux.Send(strings.Split(t, "\n")...); err != nil {
			return "", err
		}
		c.Checks++
		r, err := c.aux.CheckFor(ctx, left)
		if errors.Is(err, smt.ErrStalled) {
			// Killed for overrunning: undecided, as is every window
			// after it; a new solver starts with the next prefix.
			c.aux.Close()
			c.aux = nil
			deadline = time.Now()
			return "", nil
		}
		if err != nil {
			return "", err
		}
		if err := c.aux.Pop(); err != nil {
			return "", err
		}
		if r != smt.Unsat {
			return "", nil
		}
		return t, nil
	}
	// The whole prefix is refuted (j = 0); fewer levels assert less, so
	// the refuted windows are those starting at or before some j.
	lo, hi := 0, k-1
	text := ""
	for lo < hi {
		mid := (lo + hi + 1) / 2
		t, err := unsat(mid)
		if err != nil {
			return err
		}
		if t != "" {
			lo, text = mid, t
		} else {
			hi = mid - 1
		}
	}
	if lo == 0 {
		// Only the whole prefix: a lemma for it is what prefix pruning
		// already does.
		return nil
	}
	ls.add(c.path[lo:k], text)
	return nil
}

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

// text returns the assertions of levels [j, k) with the definitions they
// use, in the order the path made them, every defined name replaced by
// its rank of first appearance; "" when the window asserts nothing.
func (w *window) text(j, k int) string {
	var asserts []defAt
	var roots []string
	for i := j; i < k; i++ {
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
	need := uses(roots, func(name string) (string, bool) {
		d, ok := w.def[name]
		if !ok {
			return "", false
		}
		return w.levels[d.level][d.line], true
	})
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
