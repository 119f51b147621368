package symex

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/cilium/ebpf/asm"

	"github.com/dpperf/dpperf/bpfprog"
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

// konst is a constant term.
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

// res replaces a choice whose Bool the path decided by its constant, and
// a term the path asserted equal to a constant (or the zero extension of
// one) by that constant.
func (b builder) res(t term) term {
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
	for _, a := range args {
		ops = min(ops+a.ops, maxOps)
	}
	t := b.defRaw(w, app(op, args...))
	t.ops = ops
	if w > 1 && b.abstract > 0 && ops > b.abstract {
		a := b.name("a")
		b.emit("(declare-const " + a + " " + sortOf(w) + ")")
		b.emit("; @abstract " + a + " " + t.s + " " + b.where())
		b.notes[abstractNote(b.abstract)] = true
		return term{w: w, s: a}
	}
	return t
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

// zext widens t to w bits with zeros.
func (b builder) zext(t term, w uint16) term {
	t = b.res(t)
	if r, ok := b.lift(t, w, func(v uint64) uint64 { return v }); ok && t.w != w {
		return r
	}
	switch {
	case t.w == w:
		return t
	case t.known:
		return konst(w, t.c)
	}
	z := b.def(w, fmt.Sprintf("(_ zero_extend %d)", w-t.w), t)
	if t.wide != nil {
		z.wide = t.wide
	} else if t.w > 1 {
		narrow := t
		z.wide = &narrow
	}
	return z
}

// sextTo widens t to w bits with its sign.
func (b builder) sextTo(t term, w uint16) term {
	t = b.res(t)
	if r, ok := b.lift(t, w, func(v uint64) uint64 { return uint64(bpfprog.SignExtend(v, int(t.w))) }); ok && t.w != w {
		return r
	}
	switch {
	case t.w == w:
		return t
	case t.known:
		return konst(w, uint64(bpfprog.SignExtend(t.c, int(t.w))))
	}
	return b.def(w, fmt.Sprintf("(_ sign_extend %d)", w-t.w), t)
}

// extract takes bits hi..lo of t.
func (b builder) extract(t term, hi, lo uint16) term {
	w := hi - lo + 1
	t = b.res(t)
	if r, ok := b.lift(t, w, func(v uint64) uint64 { return v >> lo }); ok && !(lo == 0 && w == t.w) {
		return r
	}
	switch {
	case lo == 0 && w == t.w:
		return t
	case t.known:
		return konst(w, t.c>>lo)
	}
	return b.def(w, fmt.Sprintf("(_ extract %d %d)", hi, lo), t)
}

// concat joins terms, most significant first.
func (b builder) concat(parts ...term) term {
	w, known, c := uint16(0), true, uint64(0)
	for _, p := range parts {
		w += p.w
		known = known && p.known
		c = c<<p.w | p.c
	}
	if known && w <= 64 {
		return konst(w, c)
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return b.def(w, "concat", parts...)
}

// ite chooses a or b by the Bool c.
func (b builder) ite(c, x, y term) term {
	c, x, y = b.res(c), b.res(x), b.res(y)
	if x.known && y.known {
		return b.choose(c, x.w, x.c, y.c)
	}
	if c.known {
		if c.c != 0 {
			return x
		}
		return y
	}
	if x.known && y.known && x.c == y.c {
		return x
	}
	return b.def(x.w, "ite", c, x, y)
}

func (b builder) not(c term) term {
	if c.known {
		return boolConst(c.c == 0)
	}
	if c.notOf != "" {
		return term{w: 1, s: c.notOf, test: c.test.not(), eqOf: c.eqOf.negated()}
	}
	t := b.def(1, "not", c)
	t.notOf = c.s
	t.test = c.test.not()
	t.eqOf = c.eqOf.negated()
	return t
}

func (b builder) and(cs ...term) term {
	var live []term
	for _, c := range cs {
		if c.known {
			if c.c == 0 {
				return boolConst(false)
			}
			continue
		}
		live = append(live, c)
	}
	switch len(live) {
	case 0:
		return boolConst(true)
	case 1:
		return live[0]
	}
	return b.def(1, "and", live...)
}

func (b builder) eq(x, y term) term {
	x, y = b.res(x), b.res(y)
	if c, ok := b.decide(asm.JEq, x, y); ok {
		return c
	}
	if x.known && y.known {
		return boolConst(x.c == y.c)
	}
	if x.known {
		x, y = y, x
	}
	// Compare a zero extension through its narrow term, so that what the
	// path learns is about that term (a packet byte, not its copy in a
	// register).
	if y.known && x.wide != nil {
		if y.c > mask(x.wide.w) {
			return boolConst(false)
		}
		x, y = *x.wide, konst(x.wide.w, y.c)
	}
	t := b.def(1, "=", x, y)
	if y.known && x.alt == nil {
		t.eqOf = &eqFact{name: x.s, c: y.c}
	}
	return t
}

// alu applies a BPF ALU operation to two terms of width w (32 or 64).
// signed selects sdiv/smod for Div/Mod.
func (b builder) alu(op asm.ALUOp, signed bool, x, y term) (term, error) {
	w := x.w
	x, y = b.res(x), b.res(y)
	if x.alt != nil && (y.known || op == asm.Neg) {
		r, _ := b.lift(x, w, func(v uint64) uint64 { return foldALU(op, signed, w, v, y.c) })
		return r, nil
	}
	if y.alt != nil && x.known && op != asm.Neg {
		r, _ := b.lift(y, w, func(v uint64) uint64 { return foldALU(op, signed, w, x.c, v) })
		return r, nil
	}
	if x.known && (y.known || op == asm.Neg) {
		return konst(w, foldALU(op, signed, w, x.c, y.c)), nil
	}
	sh := func() term { // BPF masks shift amounts to the width
		return b.and2(y, konst(w, uint64(w-1)))
	}
	zero := konst(w, 0)
	switch op {
	case asm.Add:
		if y.known && y.c == 0 {
			return x, nil
		}
		return b.plusLen(b.def(w, "bvadd", x, y), x, y, 1), nil
	case asm.Sub:
		if y.known && y.c == 0 {
			return x, nil
		}
		return b.plusLen(b.def(w, "bvsub", x, y), x, y, -1), nil
	case asm.Mul:
		return b.def(w, "bvmul", x, y), nil
	case asm.Div:
		// BPF: x / 0 = 0 (SMT-LIB gives all ones).
		div := "bvudiv"
		if signed {
			div = "bvsdiv"
		}
		return b.ite(b.eq(y, zero), zero, b.def(w, div, x, y)), nil
	case asm.Mod:
		// BPF and SMT-LIB agree: x % 0 = x; the signed remainder takes the
		// dividend's sign in both.
		if signed {
			return b.def(w, "bvsrem", x, y), nil
		}
		return b.def(w, "bvurem", x, y), nil
	case asm.Or:
		return b.def(w, "bvor", x, y), nil
	case asm.And:
		return b.and2(x, y), nil
	case asm.Xor:
		return b.def(w, "bvxor", x, y), nil
	case asm.LSh:
		return b.def(w, "bvshl", x, sh()), nil
	case asm.RSh:
		return b.def(w, "bvlshr", x, sh()), nil
	case asm.ArSh:
		return b.def(w, "bvashr", x, sh()), nil
	case asm.Neg:
		return b.def(w, "bvneg", x), nil
	case asm.Mov:
		return y, nil
	}
	return term{}, fmt.Errorf("ALU operation %v", op)
}

// plusLen marks r = x ± y as the packet length plus a constant when x or,
// for a sum, y is.
func (b builder) plusLen(r, x, y term, sign int64) term {
	if r.w != 64 {
		return r
	}
	switch {
	case x.lin != nil && y.known:
		d := *x.lin + sign*int64(y.c)
		r.lin = &d
	case sign > 0 && y.lin != nil && x.known:
		d := *y.lin + int64(x.c)
		r.lin = &d
	}
	return r
}

func (b builder) and2(x, y term) term {
	x, y = b.res(x), b.res(y)
	if x.alt != nil && y.known {
		r, _ := b.lift(x, x.w, func(v uint64) uint64 { return v & y.c })
		return r
	}
	if x.known && y.known {
		return konst(x.w, x.c&y.c)
	}
	return b.def(x.w, "bvand", x, y)
}

// foldALU computes an operation on constants; signed selects the signed
// division and modulo.
func foldALU(op asm.ALUOp, signed bool, w uint16, a, c uint64) uint64 {
	if signed && op == asm.Div {
		op = asm.SDiv
	} else if signed && op == asm.Mod {
		op = asm.SMod
	}
	r, _ := bpfprog.ALU(op, int(w), a, c)
	return r
}

// cmp is the Bool of a BPF conditional jump "x op y" on w-bit terms.
func (b builder) cmp(op asm.JumpOp, x, y term) (term, error) {
	w := x.w
	x, y = b.res(x), b.res(y)
	if c, ok := b.decide(op, x, y); ok {
		return c, nil
	}
	if x.known && y.known {
		return boolConst(foldCmp(op, w, x.c, y.c)), nil
	}
	if b.lens == nil {
		return b.cmp1(op, w, x, y)
	}
	if t := lenTestOf(op, x, y, *b.lens); t != nil {
		if v, ok := t.decide(*b.lens); ok {
			return boolConst(v), nil
		}
		c, err := b.cmp1(op, w, x, y)
		c.test = t
		return c, err
	}
	return b.cmp1(op, w, x, y)
}

func (b builder) cmp1(op asm.JumpOp, w uint16, x, y term) (term, error) {
	var f string
	switch op {
	case asm.JEq:
		return b.eq(x, y), nil
	case asm.JNE:
		return b.not(b.eq(x, y)), nil
	case asm.JGT:
		f = "bvugt"
	case asm.JGE:
		f = "bvuge"
	case asm.JLT:
		f = "bvult"
	case asm.JLE:
		f = "bvule"
	case asm.JSGT:
		f = "bvsgt"
	case asm.JSGE:
		f = "bvsge"
	case asm.JSLT:
		f = "bvslt"
	case asm.JSLE:
		f = "bvsle"
	case asm.JSet:
		return b.not(b.eq(b.and2(x, y), konst(w, 0))), nil
	default:
		return term{}, fmt.Errorf("jump operation %v", op)
	}
	return b.def(1, f, x, y), nil
}

// decide compares a choice with a constant: the result is a constant or
// the choice's Bool (or its negation).
func (b builder) decide(op asm.JumpOp, x, y term) (term, bool) {
	flip := false
	if y.alt != nil && x.known {
		x, y = y, x
		flip = true
	}
	if x.alt == nil || !y.known {
		return term{}, false
	}
	f := func(v uint64) bool {
		if flip {
			return foldCmp(op, x.w, y.c, v)
		}
		return foldCmp(op, x.w, v, y.c)
	}
	a, c := f(x.alt.x), f(x.alt.y)
	switch {
	case a == c:
		return boolConst(a), true
	case a:
		return x.alt.c, true
	}
	return b.not(x.alt.c), true
}

func foldCmp(op asm.JumpOp, w uint16, a, c uint64) bool {
	taken, _ := bpfprog.Cmp(op, int(w), a, c)
	return taken
}

// bswap reverses the low n bytes of t (n*8 <= t.w) and zero-extends to 64.
func (b builder) bswap(t term, n int) term {
	parts := make([]term, n)
	for i := 0; i < n; i++ {
		parts[i] = b.extract(t, uint16(8*i+7), uint16(8*i))
	}
	return b.zext(b.concat(parts...), 64)
}
