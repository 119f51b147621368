package symex

import (
	"context"
	"errors"
	"fmt"
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
// paths can be tested against without the solver: the assertions of the
// levels of an unsat core of the prefix (a set of its edges, not
// necessarily adjacent: a parser's length byte and the test, 64 bytes
// later, that its count ran out) that are contradictory on their own,
// together with the definitions those assertions use, with every name the
// path defined renamed in order of appearance. That text is
// a formula over the program's inputs (packet, length, map contents) and
// the solver has proven it unsatisfiable. Another path that takes the
// same edges (in a DAG, in the same order), whatever it does between
// them, and whose levels over them give the same text asserts that
// formula (under other names) among others, and is refuted too. The text is compared exactly,
// so nothing is assumed about the paths' states: a different earlier path
// that changes any definition the window uses gives a different text, and
// the path goes to the solver as before.

// Lemmas is a store of refuted windows shared by the Checkers of a search,
// with the families proven impossible (Family, for the enumeration to leave
// out, see Families) and the twins still to prove (twins.go). The zero
// value is ready; it is safe for concurrent use.
type Lemmas struct {
	mu     sync.Mutex
	byLast map[int32][]lemma // by the window's last edge
	n      int
	size   int // bytes of text held
	// families are edge sequences no path that takes them can follow
	// (proven by Family), in the order they were found.
	families [][]int32
	famKeys  map[string]bool
	pending  []twin          // families to prove (see propose)
	tried    map[string]bool // twins taken from pending, proven or not
}

// claim reports whether t is neither a family nor taken by another
// Checker, and takes it.
func (ls *Lemmas) claim(t twin) bool {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	k := fmt.Sprint(t.edges)
	if ls.famKeys[k] || ls.tried[k] {
		return false
	}
	if ls.tried == nil {
		ls.tried = map[string]bool{}
	}
	ls.tried[k] = true
	return true
}

func (ls *Lemmas) queue(t twin) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	ls.pending = append(ls.pending, t)
}

func (ls *Lemmas) dequeue() (twin, bool) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if len(ls.pending) == 0 {
		return twin{}, false
	}
	t := ls.pending[len(ls.pending)-1]
	ls.pending = ls.pending[:len(ls.pending)-1]
	return t, true
}

// Covering returns the length of the shortest prefix of path that takes
// every edge of a family, or 0.
func (ls *Lemmas) Covering(path []int32) int {
	ls.mu.Lock()
	fams := ls.families
	ls.mu.Unlock()
	best := 0
	for _, f := range fams {
		if n := takes(path, f); n > 0 && (best == 0 || n < best) {
			best = n
		}
	}
	return best
}

// Takes reports whether path takes the edges of fam in order.
func Takes(path, fam []int32) bool { return takes(path, fam) > 0 }

// takes returns the length of the shortest prefix of path that takes the
// edges of fam in order, or 0.
func takes(path, fam []int32) int {
	j := 0
	for i, e := range path {
		if e == fam[j] {
			if j++; j == len(fam) {
				return i + 1
			}
		}
	}
	return 0
}

// Families returns the families (see Family) proven impossible so far, in
// the order they were found.
func (ls *Lemmas) Families() [][]int32 {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return ls.families[:len(ls.families):len(ls.families)]
}

func (ls *Lemmas) hasFamily(edges []int32) bool {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return ls.famKeys[fmt.Sprint(edges)]
}

func (ls *Lemmas) addFamily(edges []int32) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	k := fmt.Sprint(edges)
	if ls.famKeys[k] {
		return
	}
	if ls.famKeys == nil {
		ls.famKeys = map[string]bool{}
	}
	ls.famKeys[k] = true
	ls.families = append(ls.families, slices.Clone(edges))
}

type lemma struct {
	edges []int32 // the core's edges, in path order
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
	pos := map[int32]int{}
	for i, e := range c.path {
		pos[e] = i // a path of the DAG takes an edge at most once
	}
	texts := map[string]string{}
	var at []int
	for i, e := range c.path {
		for _, l := range ls.candidates(e) {
			at = at[:0]
			for _, le := range l.edges {
				p, ok := pos[le]
				if !ok || p > i {
					break
				}
				at = append(at, p)
			}
			if len(at) != len(l.edges) {
				continue
			}
			key := fmt.Sprint(at)
			t, ok := texts[key]
			if !ok {
				if w == nil {
					w = c.window(len(c.path))
				}
				t = w.textOf(at)
				texts[key] = t
			}
			if t == l.text {
				return i + 1
			}
		}
	}
	return 0
}

// learn explains a prefix of k levels the solver refuted: a second solver,
// which tracks named assertions, refutes it again and names an unsat core,
// the levels whose assertions are contradictory on their own. Their edges
// and the canonical text of their assertions become a lemma. The first
// solver keeps the path's levels. A core that cannot be had in the time
// left teaches nothing. It returns the length of the prefix the core
// refutes (its last level's), or 0 when the prefix was not refuted.
func (c *Checker) learn(ctx context.Context, k int, budget time.Duration) (int, error) {
	ls := c.opts.Lemmas
	if ls == nil || k == 0 {
		return 0, nil
	}
	if _, err := c.auxSolver(); err != nil {
		return 0, err
	}
	var lines []string
	for i, l := range c.levels[:k] {
		n := 0
		for _, line := range l.text {
			if a, ok := strings.CutPrefix(line, "(assert "); ok {
				line = "(assert (! " + a[:len(a)-1] + " :named a" + strconv.Itoa(i) + "_" + strconv.Itoa(n) + "))"
				n++
			}
			lines = append(lines, line)
		}
	}
	if err := c.aux.Push(); err != nil {
		return 0, err
	}
	if err := c.aux.Send(lines...); err != nil {
		return 0, err
	}
	c.Checks++
	r, err := c.aux.CheckFor(ctx, budget)
	if errors.Is(err, smt.ErrStalled) {
		c.aux.Close()
		c.aux = nil
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	var core []string
	if r == smt.Unsat {
		if core, err = c.aux.UnsatCore(); err != nil {
			return 0, err
		}
	}
	if err := c.aux.Pop(); err != nil {
		return 0, err
	}
	if r != smt.Unsat {
		return 0, nil
	}
	at := coreLevels(core, k)
	if len(at) == 0 || len(at) == k {
		return k, nil // no core, or the whole prefix: prefix pruning covers it
	}
	refuted := at[len(at)-1] + 1
	edges := make([]int32, len(at))
	for i, l := range at {
		edges[i] = c.path[l]
	}
	ls.add(edges, c.window(k).textOf(at))
	if !c.opts.Families {
		return refuted, nil
	}
	fam := c.familyOf(at)
	if ls.hasFamily(fam) {
		return refuted, nil
	}
	ok, err := c.Family(ctx, fam, budget)
	if err != nil {
		return 0, err
	}
	if ok {
		ls.addFamily(fam)
		c.propose(fam, 1, -1)
	}
	return refuted, nil
}

// familyOf returns the edges of the family to prove impossible for a core
// (levels at): the core's edges, and those of the levels between its first
// and last whose conditions involve a value the core's conditions use. A
// branch on such a value (a label's remaining length tested for zero)
// decides what the family's over-approximation could not follow were it
// left to a region; a branch on anything else (the case of a label's
// byte) stays free, which is what makes the family large.
func (c *Checker) familyOf(at []int) []int32 {
	w := c.window(at[len(at)-1] + 1)
	var roots []string
	for _, i := range at {
		roots = append(roots, assertions(w.levels[i])...)
	}
	core := uses(roots, w.body)
	var edges []int32
	j := 0
	for i := at[0]; i <= at[len(at)-1]; i++ {
		if j < len(at) && at[j] == i {
			edges = append(edges, c.path[i])
			j++
			continue
		}
		for name := range uses(assertions(w.levels[i]), w.body) {
			if core[name] {
				edges = append(edges, c.path[i])
				break
			}
		}
	}
	return edges
}

// assertions returns the assertion lines of a level.
func assertions(text []string) []string {
	var out []string
	for _, line := range text {
		if strings.HasPrefix(line, "(assert ") {
			out = append(out, line)
		}
	}
	return out
}

// auxSolver returns the second solver, started on first use.
func (c *Checker) auxSolver() (*smt.Solver, error) {
	if c.aux == nil {
		o := c.opts
		o.Solver.UnsatCores = true
		s, err := startSolver(o, c.g.Maps)
		if err != nil {
			return nil, err
		}
		c.aux = s
	}
	return c.aux, nil
}

// coreLevels returns the levels (below k, ascending) that the names of an
// unsat core ("a" level "_" index) point to.
func coreLevels(core []string, k int) []int {
	seen := map[int]bool{}
	var at []int
	for _, name := range core {
		l, _, ok := strings.Cut(strings.TrimPrefix(name, "a"), "_")
		n, err := strconv.Atoi(l)
		if !ok || err != nil || n < 0 || n >= k || seen[n] {
			continue
		}
		seen[n] = true
		at = append(at, n)
	}
	slices.Sort(at)
	return at
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
