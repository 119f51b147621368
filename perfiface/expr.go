package perfiface

import (
	"fmt"
	"strconv"
	"strings"
)

// expr is a branch condition, or a part of one, rebuilt from the solver's
// text in a form that can be read: packet bytes at known offsets, map
// membership and map value bytes, helper results by name.
type expr struct {
	op   string  // opConst, opVar, opPkt, opVal, opContains, or an operator ("==", "&", "and", ...)
	w    int     // width in bits; 1 for a Bool
	c    uint64  // opConst
	name string  // opVar: what it is; opVal, opContains: the map
	args []*expr // operands; opContains: the key
	// opPkt, opVal: the byte offsets the value is made of, most significant
	// first; sym, if set, is a term every offset adds (a variable header
	// length).
	offs []int
	sym  *expr
}

const (
	opConst    = "const"
	opVar      = "var"
	opPkt      = "pkt"
	opVal      = "val"
	opContains = "contains"
)

// constExpr is the constant c, w bits wide.
func constExpr(w int, c uint64) *expr {
	if w < 64 {
		c &= 1<<w - 1
	}
	return &expr{op: opConst, w: w, c: c}
}

// varExpr is a value read by its name, w bits wide.
func varExpr(w int, name string) *expr { return &expr{op: opVar, w: w, name: name} }

func (r *expr) isConst() bool { return r.op == opConst }

// bytes reports a value made of whole bytes of one array.
func (r *expr) bytes() bool { return r.op == opPkt || r.op == opVal }

// ascending reports byte offsets k, k+1, ...: a field in network order.
// descending is a little-endian load of such a field.
func (r *expr) ascending() bool  { return run(r.offs, 1) }
func (r *expr) descending() bool { return run(r.offs, -1) }

func run(offs []int, step int) bool {
	for i := 1; i < len(offs); i++ {
		if offs[i] != offs[i-1]+step {
			return false
		}
	}
	return len(offs) > 0
}

// swapped returns the bytes in the other order.
func (r *expr) swapped() *expr {
	s := *r
	s.offs = make([]int, len(r.offs))
	for i, o := range r.offs {
		s.offs[len(r.offs)-1-i] = o
	}
	return &s
}

// bswap reverses the low n bytes of a constant.
func bswap(c uint64, n int) uint64 {
	var out uint64
	for i := 0; i < n; i++ {
		out = out<<8 | (c>>(8*i))&0xff
	}
	return out
}

var flipped = map[string]string{"==": "!=", "!=": "==", "<": ">=", ">=": "<", ">": "<=", "<=": ">",
	"s<": "s>=", "s>=": "s<", "s>": "s<=", "s<=": "s>"}

// negate returns "not r", pushing the negation into a comparison.
func negate(r *expr) *expr {
	if f, ok := flipped[r.op]; ok {
		return &expr{op: f, w: 1, args: r.args}
	}
	if r.op == "not" {
		return r.args[0]
	}
	if r.isConst() {
		return constExpr(1, r.c^1)
	}
	return &expr{op: "not", w: 1, args: []*expr{r}}
}

// normalize rewrites comparisons of little-endian loads of packet fields
// with constants into comparisons of the fields in network order, so that
// "h_proto == htons(ETH_P_IP)" reads as eth.type == 0x0800.
func normalize(r *expr) *expr {
	if r == nil || r.op == opConst || r.op == opVar || r.bytes() {
		return r
	}
	out := *r
	out.args = make([]*expr, len(r.args))
	for i, a := range r.args {
		out.args[i] = normalize(a)
	}
	if m, ok := mirrored[out.op]; ok && len(out.args) == 2 && out.args[0].isConst() && !out.args[1].isConst() {
		out.op, out.args = m, []*expr{out.args[1], out.args[0]}
	}
	if (out.op == "==" || out.op == "!=") && len(out.args) == 2 {
		a, b := out.args[0], out.args[1]
		if a.isConst() && !b.isConst() {
			a, b = b, a
		}
		if b.isConst() {
			if x, ok := toNetwork(a); ok {
				n := len(leafBytes(a))
				out.args = []*expr{x, constExpr(8*n, bswap(b.c, n))}
			}
		}
	}
	return &out
}

// toNetwork rewrites a little-endian packet load, optionally masked by a
// constant, into the network-order field with the mask byte-swapped.
func toNetwork(a *expr) (*expr, bool) {
	switch {
	case a.op == opPkt && a.descending() && len(a.offs) > 1:
		return a.swapped(), true
	case a.op == "&" && len(a.args) == 2 && a.args[1].isConst() && a.args[0].op == opPkt && a.args[0].descending() && len(a.args[0].offs) > 1:
		n := len(a.args[0].offs)
		return &expr{op: "&", w: 8 * n, args: []*expr{a.args[0].swapped(), constExpr(8*n, bswap(a.args[1].c, n))}}, true
	}
	return nil, false
}

func leafBytes(a *expr) []int {
	if a.bytes() {
		return a.offs
	}
	if len(a.args) > 0 {
		return leafBytes(a.args[0])
	}
	return nil
}

// constText prints a constant: small numbers in decimal, the rest in hex.
func constText(c uint64, w int) string {
	if w == 1 {
		if c != 0 {
			return "True"
		}
		return "False"
	}
	if c < 1024 {
		return strconv.FormatUint(c, 10)
	}
	if w < 64 && c>>(w-1) == 1 && w >= 16 {
		// A negative number in two's complement reads better signed.
		if neg := int64(c | ^uint64(0)<<w); neg > -4096 {
			return strconv.FormatInt(neg, 10)
		}
	}
	digits := 2
	for digits < 16 && c>>(4*digits) != 0 {
		digits *= 2
	}
	return fmt.Sprintf("0x%0*x", digits, c)
}

var infix = map[string]string{"==": "==", "!=": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">=",
	"s<": "<", "s<=": "<=", "s>": ">", "s>=": ">=", "&": "&", "|": "|", "^": "^", "+": "+", "-": "-",
	"*": "*", "/": "//", "%": "%", "<<": "<<", ">>": ">>", "s>>": ">>", "and": "and", "or": "or"}

// prec is the binding strength of an infix operator, as in Python.
var prec = map[string]int{"or": 1, "and": 2, "==": 4, "!=": 4, "<": 4, "<=": 4, ">": 4, ">=": 4,
	"|": 5, "^": 6, "&": 7, "<<": 8, ">>": 8, "+": 9, "-": 9, "*": 10, "//": 10, "%": 10}

// render prints r as a Python expression; names gives packet and map
// fields their names.
func render(r *expr, names namer) string {
	s, _ := renderP(r, names)
	return s
}

func renderP(r *expr, names namer) (string, int) {
	switch r.op {
	case opConst:
		return constText(r.c, r.w), 100
	case opVar:
		return r.name, 100
	case opPkt, opVal:
		return names.bytesName(r), 100
	case opContains:
		key := "?"
		if len(r.args) == 1 {
			key = names.keyText(r.name, r.args[0])
		}
		return pyIdent(r.name) + ".contains(" + key + ")", 100
	case "not":
		s, q := renderP(r.args[0], names)
		if q < 3 {
			s = "(" + s + ")"
		}
		return "not " + s, 3
	case "ite":
		c, _ := renderP(r.args[0], names)
		x, _ := renderP(r.args[1], names)
		y, _ := renderP(r.args[2], names)
		return "(" + x + " if " + c + " else " + y + ")", 100
	}
	if s, ok := names.special(r); ok {
		return s, textPrec(s)
	}
	op, ok := infix[r.op]
	if !ok {
		parts := make([]string, len(r.args))
		for i, a := range r.args {
			parts[i] = render(a, names)
		}
		return r.op + "(" + strings.Join(parts, ", ") + ")", 100
	}
	if r.w > 1 && !boolOps[r.op] {
		if h, ok := hashOf(r, names); ok {
			return h, 100
		}
	}
	p := prec[op]
	parts := make([]string, len(r.args))
	for i, a := range r.args {
		s, q := renderP(a, names)
		if q <= p && !(q == p && (op == "and" || op == "or")) {
			s = "(" + s + ")"
		}
		parts[i] = s
	}
	return strings.Join(parts, " "+op+" "), p
}

// namer gives packet bytes, map keys and special forms their readable
// names.
type namer interface {
	bytesName(r *expr) string
	keyText(mapName string, key *expr) string
	special(r *expr) (string, bool)
}

// textPrec is the binding strength of a printed expression: that of its
// loosest operator outside brackets (100 for a name, a call or a
// bracketed form), so that a name such as pkt.ip.ihl*4 is parenthesised
// where an operator binds tighter.
func textPrec(s string) int {
	p := 100
	if strings.HasPrefix(s, "not ") {
		p = 3
	}
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(', '[', '{':
			depth++
			continue
		case ')', ']', '}':
			depth--
			continue
		}
		if depth != 0 {
			continue
		}
		for op, q := range prec {
			if q >= p {
				continue
			}
			w := " " + op + " "
			if op == "*" && strings.HasPrefix(s[i:], "*") {
				p = q // pkt.ip.ihl*4
			} else if strings.HasPrefix(s[i:], w) {
				p = q
			}
		}
		if strings.HasPrefix(s[i:], " if ") {
			p = min(p, 0)
		}
	}
	return p
}

// maxHashText is the longest arithmetic on abstracted hashes printed as
// it is; a longer one (the rounds of a jhash the analysis abstracts
// piecewise) is printed as one hash(...) of all its inputs.
const maxHashText = 60

// hashOf prints arithmetic over hash(...) values as one hash of their
// inputs, when written out it would be longer than maxHashText.
func hashOf(r *expr, names namer) (string, bool) {
	var inputs []string
	seen := map[string]bool{}
	hashes, size := 0, 0
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			inputs = append(inputs, s)
		}
	}
	var walk func(x *expr)
	walk = func(x *expr) {
		size++
		switch {
		case x.op == opVar && strings.HasPrefix(x.name, "hash(") && strings.HasSuffix(x.name, ")"):
			hashes++
			if _, args := splitArgs(x.name[len("hash("):]); len(args) > 0 {
				for _, a := range args {
					if a != "" {
						add(a)
					}
				}
			}
		case x.op == opVar:
			add(x.name)
		case x.bytes():
			add(names.bytesName(x))
		case x.isConst():
		default:
			for _, a := range x.args {
				walk(a)
			}
		}
	}
	walk(r)
	if hashes == 0 || size < 4 {
		return "", false
	}
	if s, _ := renderPlain(r, names); len(s) <= maxHashText {
		return "", false
	}
	if len(inputs) > 6 {
		inputs = append(inputs[:6], "...")
	}
	return "hash(" + strings.Join(inputs, ", ") + ")", true
}

// renderPlain renders r without folding hashes.
func renderPlain(r *expr, names namer) (string, int) {
	op, ok := infix[r.op]
	if !ok || r.w <= 1 {
		return renderP(r, names)
	}
	p := prec[op]
	parts := make([]string, len(r.args))
	for i, a := range r.args {
		s, q := renderPlain(a, names)
		if q <= p {
			s = "(" + s + ")"
		}
		parts[i] = s
	}
	return strings.Join(parts, " "+op+" "), p
}
