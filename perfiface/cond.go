package perfiface

import (
	"strconv"
	"strings"

	"github.com/dpperf/dpperf/cfg"
)

// Cond is the condition under which a branch goes to its Then side.
type Cond struct {
	Insn   int    // the branch instruction (the last one of its block)
	Kind   string // the Then edge's kind ("taken", "not-taken", ...)
	Source string // source location and text of the branch, when the object has line info
	expr   *expr  // nil when the text could not be read
}

// newCond reads the condition that the last edge of prefix asserts from
// the SMT text of the prefix (one slice of commands per edge).
func newCond(g *cfg.Graph, prefix []int32, text [][]string, t *translator) *Cond {
	e := g.Edges[prefix[len(prefix)-1]]
	c := &Cond{Insn: -1, Kind: e.Kind.String()}
	if _, last := g.Insns(e.From); last >= 0 {
		c.Insn = last
		if loc, src := g.Prog.Line(last); loc != "" {
			c.Source = loc
			if src = strings.TrimSpace(src); src != "" {
				c.Source += ": " + src
			}
		}
	}
	if len(text) == 0 {
		return c
	}
	var assert string
	for _, line := range text[len(text)-1] {
		if strings.HasPrefix(line, "(assert ") {
			assert = line
			break
		}
	}
	if assert == "" {
		return c
	}
	s, err := parseSX(assert)
	if err != nil || len(s.list) != 2 {
		return c
	}
	c.expr = normalize(t.conv(s.list[1]))
	return c
}

// lookupNote is what an "; @lookup" comment says of a map lookup.
type lookupNote struct{ found, mapName, key, arr string }

type translator struct {
	defs    map[string]*sx
	raw     map[string]string
	lookups map[string]lookupNote // by found Bool and by value array
	calls   map[string][]string   // result name → helper, map
	memo    map[string]*expr
	// widths holds the declared constants' widths (0: an array);
	// abstracts maps an abstracted value to its exact definition's name.
	widths    map[string]int
	abstracts map[string]string
}

func emptyTranslator() *translator {
	return &translator{defs: map[string]*sx{}, raw: map[string]string{}, lookups: map[string]lookupNote{},
		calls: map[string][]string{}, memo: map[string]*expr{}, widths: map[string]int{}, abstracts: map[string]string{}}
}

// add reads one level's text and returns the names it added.
func (t *translator) add(level []string) []string {
	var names []string
	for _, line := range level {
		switch {
		case strings.HasPrefix(line, "(define-fun "):
			name, _, _ := strings.Cut(line[len("(define-fun "):], " ")
			t.raw[name] = line
			names = append(names, name)
		case strings.HasPrefix(line, "; @lookup "):
			f := strings.Fields(line[len("; @lookup "):])
			if len(f) == 4 {
				n := lookupNote{found: f[0], mapName: f[1], key: f[2], arr: f[3]}
				t.lookups[f[0]], t.lookups[f[3]] = n, n
				names = append(names, f[0], f[3])
			}
		case strings.HasPrefix(line, "(declare-const "):
			name, sort, _ := strings.Cut(strings.TrimSuffix(line[len("(declare-const "):], ")"), " ")
			t.widths[name] = sortWidth(sort)
			names = append(names, name)
		case strings.HasPrefix(line, "; @abstract "):
			if f := strings.Fields(line[len("; @abstract "):]); len(f) >= 2 {
				t.abstracts[f[0]] = f[1]
				names = append(names, f[0])
			}
		case strings.HasPrefix(line, "; @call "):
			f := strings.Fields(line[len("; @call "):])
			if len(f) >= 2 {
				t.calls[f[0]] = f[1:]
				names = append(names, f[0])
			}
		}
	}
	return names
}

// forget drops what t knows of names.
func (t *translator) forget(names []string) {
	for _, n := range names {
		delete(t.defs, n)
		delete(t.raw, n)
		delete(t.lookups, n)
		delete(t.calls, n)
		delete(t.memo, n)
		delete(t.widths, n)
		delete(t.abstracts, n)
	}
}

// def returns the parsed definition of a name.
func (t *translator) def(name string) (*sx, bool) {
	if d, ok := t.defs[name]; ok {
		return d, true
	}
	line, ok := t.raw[name]
	if !ok {
		return nil, false
	}
	s, err := parseSX(line)
	if err != nil || len(s.list) != 5 {
		return nil, false
	}
	t.defs[name] = s.list[4]
	return s.list[4], true
}

var smtOps = map[string]string{"=": "==", "distinct": "!=", "bvult": "<", "bvule": "<=", "bvugt": ">",
	"bvuge": ">=", "bvslt": "s<", "bvsle": "s<=", "bvsgt": "s>", "bvsge": "s>=", "bvand": "&", "bvor": "|",
	"bvxor": "^", "bvadd": "+", "bvsub": "-", "bvmul": "*", "bvudiv": "/", "bvurem": "%", "bvsdiv": "/",
	"bvsrem": "%", "bvshl": "<<", "bvlshr": ">>", "bvashr": "s>>", "and": "and", "or": "or"}

var boolOps = map[string]bool{"==": true, "!=": true, "<": true, "<=": true, ">": true, ">=": true,
	"s<": true, "s<=": true, "s>": true, "s>=": true, "and": true, "or": true}

// maxExpr is the largest expression (in nodes, written out as a tree) a
// condition shows; beyond it, as after a hash computed in the program,
// the term is shown as opaque() and the branch's source line explains it.
const maxExpr = 200

// small reports whether r written out as a tree has at most limit nodes,
// visiting no more than that many.
func small(r *expr, limit int) bool {
	n := 0
	var walk func(*expr) bool
	walk = func(x *expr) bool {
		n++
		if n > limit {
			return false
		}
		if x.sym != nil && !walk(x.sym) {
			return false
		}
		for _, a := range x.args {
			if !walk(a) {
				return false
			}
		}
		return true
	}
	return walk(r)
}

// conv turns an SMT term into an expr, replacing a term too large to read
// by an opaque value.
func (t *translator) conv(s *sx) *expr {
	r := t.conv1(s)
	if !small(r, maxExpr) {
		return varExpr(r.w, "opaque()")
	}
	return r
}

func (t *translator) conv1(s *sx) *expr {
	if s.isAtom() {
		return t.atom(s.atom)
	}
	h := s.head()
	args := s.list[1:]
	switch h {
	case "_": // (_ bvN W)
		if len(s.list) == 3 && strings.HasPrefix(s.list[1].atom, "bv") {
			c, _ := strconv.ParseUint(s.list[1].atom[2:], 10, 64)
			w, _ := strconv.Atoi(s.list[2].atom)
			return constExpr(w, c)
		}
	case "select":
		if len(args) == 2 {
			return t.sel(args[0], args[1])
		}
	case "concat":
		return t.concat(args)
	case "extract":
		if ix := s.index(); len(ix) == 2 && len(args) == 1 {
			return extract(t.conv(args[0]), ix[0], ix[1])
		}
	case "zero_extend":
		if ix := s.index(); len(ix) == 1 && len(args) == 1 {
			a := *t.conv(args[0])
			if a.isConst() {
				return constExpr(a.w+ix[0], a.c)
			}
			a.w += ix[0]
			return &a
		}
	case "not":
		if len(args) == 1 {
			return negate(t.conv(args[0]))
		}
	case "bvnot": // the complement within the width
		if len(args) == 1 {
			x := t.conv(args[0])
			return simplify(&expr{op: "^", w: x.w, args: []*expr{x, constExpr(x.w, ^uint64(0))}})
		}
	case "ite":
		if len(args) == 3 {
			x, y := t.conv(args[1]), t.conv(args[2])
			return &expr{op: "ite", w: x.w, args: []*expr{t.conv(args[0]), x, y}}
		}
	}
	op, ok := smtOps[h]
	if !ok {
		op = strings.TrimPrefix(h, "bv")
	}
	r := &expr{op: op, w: 1}
	for _, a := range args {
		r.args = append(r.args, t.conv(a))
	}
	if !boolOps[op] && len(r.args) > 0 {
		r.w = r.args[0].w
	}
	return simplify(r)
}

func (t *translator) atom(a string) *expr {
	if r, ok := t.memo[a]; ok {
		return r
	}
	var r *expr
	switch {
	case strings.HasPrefix(a, "#x"):
		c, _ := strconv.ParseUint(a[2:], 16, 64)
		r = constExpr(4*(len(a)-2), c)
	case strings.HasPrefix(a, "#b"):
		c, _ := strconv.ParseUint(a[2:], 2, 64)
		r = constExpr(len(a)-2, c)
	case a == "true":
		r = constExpr(1, 1)
	case a == "false":
		r = constExpr(1, 0)
	case a == "len":
		r = varExpr(64, "pkt.len")
	case a == "ifindex":
		r = varExpr(32, "ctx.ingress_ifindex")
	case a == "rxq":
		r = varExpr(32, "ctx.rx_queue_index")
	default:
		if n, ok := t.lookups[a]; ok && n.found == a {
			key := varExpr(64, "key")
			if k, ok := t.keyTerm(n.key); ok {
				key = k
			}
			r = &expr{op: opContains, w: 1, name: n.mapName, args: []*expr{key}}
		} else if c, ok := t.calls[a]; ok {
			r = varExpr(64, callName(c))
		} else if d, ok := t.def(a); ok {
			r = t.conv(d)
		} else {
			r = t.declared(a)
		}
	}
	t.memo[a] = r
	return r
}

func (t *translator) keyTerm(name string) (*expr, bool) {
	if strings.HasPrefix(name, "#x") || strings.HasPrefix(name, "(") {
		s, err := parseSX(name)
		if err != nil {
			return nil, false
		}
		return t.conv(s), true
	}
	return t.atom(name), true
}

// callName names a helper's result: "now()" for the clock, "random()",
// "flows.update()" for a map update's status.
func callName(c []string) string {
	fn := strings.TrimPrefix(c[0], "Fn")
	switch fn {
	case "KtimeGetNs", "KtimeGetBootNs", "KtimeGetCoarseNs", "KtimeGetTaiNs", "Jiffies64":
		return "now()"
	case "GetPrandomU32":
		return "random()"
	case "GetSmpProcessorId":
		return "cpu()"
	case "MapUpdateElem", "MapDeleteElem":
		op := "update"
		if fn == "MapDeleteElem" {
			op = "delete"
		}
		if len(c) > 1 {
			return c[1] + "." + op + "()"
		}
		return op + "()"
	}
	return snakeName(fn) + "()"
}

func snakeName(s string) string {
	var b strings.Builder
	for i, r := range s {
		if r >= 'A' && r <= 'Z' {
			if i > 0 {
				b.WriteByte('_')
			}
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}
