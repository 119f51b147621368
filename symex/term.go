package symex

import (
	"fmt"
	"strconv"
	"strings"
)

// term is a bit-vector (or, with width 1, Boolean) SMT term, folded to a
// constant when its value is known.
type term struct {
	w     uint16 // width in bits; 1 is Bool
	known bool   // c holds the value
	c     uint64 // the constant, masked to w bits
	s     string // SMT-LIB text: a name, a literal or a small expression
	// alt is set when the term is one of two constants chosen by a Bool,
	// such as a helper's result (0 or -EINVAL) or a packet offset after
	// bpf_xdp_adjust_head: operations with constants stay two constants,
	// comparisons become the Bool itself, and once the path decides the
	// Bool the term becomes a constant again.
	alt *choice
	// notOf names the Bool this Bool negates.
	notOf string
	// test is set when the Bool compares the packet length with a constant.
	test *lenTest
	// lin, when set, says the term is the packet length plus *lin.
	lin *int64
	// ops is the size of the expression written out as a tree (names
	// expanded), saturating at maxOps: what a reader or a solver meets.
	ops uint32
	// hashed says the term is computed from a value taken as
	// unconstrained (see builder.def).
	hashed bool
	// wide, when set, says the term is the zero extension of *wide.
	wide *term
	// eqOf, on a Bool, says it compares a term with a constant.
	eqOf *eqFact
}

// eqFact is "name = c", or with neg "name != c".
type eqFact struct {
	name string
	c    uint64
	neg  bool
}

// negated returns the fact of the negated Bool.
func (e *eqFact) negated() *eqFact {
	if e == nil {
		return nil
	}
	return &eqFact{name: e.name, c: e.c, neg: !e.neg}
}

// choice is "if c then x else y" for constants x and y.
type choice struct {
	c    term
	x, y uint64
}

func mask(w uint16) uint64 {
	if w >= 64 {
		return ^uint64(0)
	}
	return 1<<w - 1
}

func sortOf(w uint16) string {
	if w == 1 {
		return "Bool"
	}
	return "(_ BitVec " + strconv.Itoa(int(w)) + ")"
}

// hexConst writes c as an SMT-LIB hexadecimal literal of digits digits
// (what fmt's "#x%0*x" gives, without its cost: symbolic execution makes
// a constant for nearly every instruction).
func hexConst(digits uint16, c uint64) string {
	const hex = "0123456789abcdef"
	var buf [2 + 64]byte
	n := int(digits)
	if n > 64 {
		return fmt.Sprintf("#x%0*x", digits, c)
	}
	buf[0], buf[1] = '#', 'x'
	for i := n - 1; i >= 0; i-- {
		buf[2+i] = hex[c&15]
		c >>= 4
	}
	return string(buf[:2+n])
}

// konst is a constant term.
func konst(w uint16, c uint64) term {
	c &= mask(w)
	t := term{w: w, known: true, c: c}
	switch {
	case w == 1 && c == 0:
		t.s = "false"
	case w == 1:
		t.s = "true"
	case w%4 == 0:
		t.s = hexConst(w/4, c)
	default:
		t.s = fmt.Sprintf("(_ bv%d %d)", c, w)
	}
	return t
}

func boolConst(b bool) term {
	if b {
		return konst(1, 1)
	}
	return konst(1, 0)
}

// builder creates terms, binding every non-constant result to a name so
// that terms stay small however often they are reused.
type builder struct {
	out     *[]string             // SMT commands of the current edge
	next    *int                  // name counter
	decided *pmap[string, bool]   // Bools the path has asserted, by name
	eqs     *pmap[string, uint64] // terms the path has asserted equal to a constant
	// abstract, when non-zero, is the tree size above which a value is
	// abstracted (see def); where names the instruction being executed.
	abstract uint32
	where    func() string
	notes    map[string]bool
	// lens is the interval of packet lengths the path allows.
	lens *span
}

// resolve replaces a choice whose Bool the path decided by its constant,
// and a term the path asserted equal to a constant (or the zero extension
// of one) by that constant.
func (b builder) resolve(t term) term {
	if !t.known && t.alt == nil {
		name := t.s
		if t.wide != nil {
			name = t.wide.s
		}
		if v, ok := b.eqs.get(name); ok {
			return konst(t.w, v)
		}
	}
	if t.alt != nil {
		if v, ok := b.decided.get(t.alt.c.s); ok {
			if v {
				return konst(t.w, t.alt.x)
			}
			return konst(t.w, t.alt.y)
		}
	}
	return t
}

// choose builds "if c then x else y" of two constants.
func (b builder) choose(c term, w uint16, x, y uint64) term {
	x, y = x&mask(w), y&mask(w)
	switch {
	case c.known && c.c != 0:
		return konst(w, x)
	case c.known:
		return konst(w, y)
	case x == y:
		return konst(w, x)
	}
	t := b.def(w, "ite", c, konst(w, x), konst(w, y))
	t.alt = &choice{c: c, x: x, y: y}
	return t
}

// lift applies a constant function to both branches of a choice.
func (b builder) lift(t term, w uint16, f func(uint64) uint64) (term, bool) {
	if t.alt == nil {
		return term{}, false
	}
	return b.choose(t.alt.c, w, f(t.alt.x), f(t.alt.y)), true
}

func (b builder) emit(line string) { *b.out = append(*b.out, line) }

func (b builder) name(prefix string) string {
	*b.next++
	return prefix + strconv.Itoa(*b.next)
}

// def binds "(op args...)" to a fresh name. A bit-vector whose expression,
// written out as a tree, exceeds the builder's abstraction size (a hash
// computed by the program) is replaced by a fresh unconstrained value; the
// exact definition stays available under its own name (see
// Checker.abstractions).
func (b builder) def(w uint16, op string, args ...term) term {
	ops := uint32(1)
	hashed := false
	for _, a := range args {
		ops = min(ops+a.ops, maxOps)
		hashed = hashed || a.hashed
	}
	t := b.defRaw(w, app(op, args...))
	t.ops, t.hashed = ops, hashed
	limit := b.abstract
	if hashed && mixes(op) {
		limit = b.abstract / hashedShare
	}
	if w > 1 && b.abstract > 0 && ops > limit {
		a := b.name("a")
		b.emit("(declare-const " + a + " " + sortOf(w) + ")")
		b.emit("; @abstract " + a + " " + t.s + " " + b.where())
		b.notes[abstractNote(b.abstract)] = true
		return term{w: w, s: a, hashed: true}
	}
	return t
}

// hashedShare divides the abstraction size for a term computed from a
// value already taken as unconstrained: the rest of a hash's mixing (see
// docs/interface.md for why a half).
const hashedShare = 2

// mixes reports whether op computes (a bit-vector operation) rather than
// moves bits (concat, extract, extension).
func mixes(op string) bool {
	return strings.HasPrefix(op, "bv")
}

// maxOps caps the tree size a term records.
const maxOps = 1 << 30

// defRaw binds an expression to a fresh name.
func (b builder) defRaw(w uint16, expr string) term {
	n := b.name("t")
	b.emit("(define-fun " + n + " () " + sortOf(w) + " " + expr + ")")
	return term{w: w, s: n, ops: 1}
}

// fresh declares an unconstrained term.
func (b builder) fresh(w uint16, prefix string) term {
	n := b.name(prefix)
	b.emit("(declare-const " + n + " " + sortOf(w) + ")")
	return term{w: w, s: n}
}

func app(op string, args ...term) string {
	var sb strings.Builder
	sb.WriteString("(" + op)
	for _, a := range args {
		sb.WriteString(" " + a.s)
	}
	sb.WriteString(")")
	return sb.String()
}
