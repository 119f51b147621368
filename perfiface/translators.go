package perfiface

import (
	"sync"

	"github.com/dpperf/dpperf/symex"
)

// A translator per solver, kept from one branch's description to the
// next: a depth-first search describes prefix after prefix of one path,
// so only the levels past the previous prefix are read, and the names of
// the levels it left behind are forgotten (a sibling's levels reuse
// them).

// pathTranslator is a translator and the levels of text it holds.
type pathTranslator struct {
	t      *translator
	levels [][]string
	names  [][]string // the names each level added
}

// load brings the translator to the levels of text and returns it.
func (p *pathTranslator) load(text [][]string) *translator {
	if p.t == nil {
		p.t = emptyTranslator()
	}
	common := 0
	for common < len(p.levels) && common < len(text) && sameLevel(p.levels[common], text[common]) {
		common++
	}
	for i := len(p.levels) - 1; i >= common; i-- {
		p.t.forget(p.names[i])
	}
	p.levels, p.names = p.levels[:common], p.names[:common]
	for _, l := range text[common:] {
		p.levels = append(p.levels, l)
		p.names = append(p.names, p.t.add(l))
	}
	return p.t
}

// sameLevel reports whether two levels are one level's text: a checker
// hands out the slices it holds.
func sameLevel(a, b []string) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// translators holds a pathTranslator per solver.
type translators struct {
	mu sync.Mutex
	by map[*symex.Checker]*pathTranslator
}

func (ts *translators) of(c *symex.Checker) *pathTranslator {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.by == nil {
		ts.by = map[*symex.Checker]*pathTranslator{}
	}
	p := ts.by[c]
	if p == nil {
		p = &pathTranslator{}
		ts.by[c] = p
	}
	return p
}
