package smt

import "strings"

// A path's SMT text defines every value the program computes, and most of
// them (bytes a transcoder writes, a checksum nobody tests) are used by no
// assertion. z3 processes a definition when it receives it, used or not:
// on a 160-byte transcoder's path, 7,864 definitions for 162 assertions
// about the packet's length took it 1.4 s of a check that needs 0.05 s
// with the 331 definitions the assertions use. With lazy definitions the
// solver process receives a definition only when a later command (an
// assertion, a get-value, an eval) uses it, and definitions follow the
// scopes they were given and sent in, as the solver's own would.

// lazyDefs holds the definitions not yet sent, per scope.
type lazyDefs struct {
	defs   map[string]*lazyDef
	scopes []lazyScope // scopes[0] is the outermost
}

type lazyDef struct {
	line string
	sent bool
}

// lazyScope is what a pop undoes: the definitions given in the scope and
// those sent in it.
type lazyScope struct {
	given, sent []string
}

func newLazyDefs() *lazyDefs {
	return &lazyDefs{defs: map[string]*lazyDef{}, scopes: make([]lazyScope, 1)}
}

func (z *lazyDefs) push() { z.scopes = append(z.scopes, lazyScope{}) }

func (z *lazyDefs) pop() {
	top := z.scopes[len(z.scopes)-1]
	z.scopes = z.scopes[:len(z.scopes)-1]
	for _, name := range top.sent {
		if d := z.defs[name]; d != nil {
			d.sent = false
		}
	}
	for _, name := range top.given {
		delete(z.defs, name)
	}
}

// hold keeps a constant definition back and reports whether line was one.
func (z *lazyDefs) hold(line string) bool {
	rest, ok := strings.CutPrefix(line, "(define-fun ")
	if !ok {
		return false
	}
	name, args, ok := strings.Cut(rest, " ")
	if !ok || !strings.HasPrefix(args, "()") {
		return false
	}
	z.defs[name] = &lazyDef{line: line}
	top := &z.scopes[len(z.scopes)-1]
	top.given = append(top.given, name)
	return true
}

// require writes, before text, every held definition text uses, each
// after the definitions it uses in turn.
func (z *lazyDefs) require(text string, write func(string)) {
	for i := 0; i < len(text); {
		for i < len(text) && isSep(text[i]) {
			i++
		}
		j := i
		for j < len(text) && !isSep(text[j]) {
			j++
		}
		if j > i {
			if d := z.defs[text[i:j]]; d != nil && !d.sent {
				d.sent = true
				top := &z.scopes[len(z.scopes)-1]
				top.sent = append(top.sent, text[i:j])
				z.require(d.line, write)
				write(d.line)
			}
		}
		i = j
	}
}

func isSep(b byte) bool { return b == ' ' || b == '(' || b == ')' || b == '\n' || b == '\t' }
