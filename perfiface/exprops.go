package perfiface

import (
	"slices"
	"strconv"
	"strings"
)

// linear splits an offset into a symbolic part and a constant.
func linear(r *expr) (*expr, int) {
	switch {
	case r.isConst():
		return nil, int(int64(r.c))
	case r.op == "+" && len(r.args) == 2 && r.args[1].isConst():
		s, c := linear(r.args[0])
		return s, c + int(int64(r.args[1].c))
	case r.op == "+" && len(r.args) == 2 && r.args[0].isConst():
		s, c := linear(r.args[1])
		return s, c + int(int64(r.args[0].c))
	}
	return r, 0
}

func sameSym(a, b *expr) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a == b || render(a, plainNames{}) == render(b, plainNames{})
}

// sel reads one byte of an array: the packet, a map value, or a version
// of either after stores.
func (t *translator) sel(arr, idx *sx) *expr {
	sym, off := linear(t.conv(idx))
	if sym != nil && sym.w > 0 {
		// Offsets are 32-bit truncations of 64-bit sums; the width is noise.
		s := *sym
		sym = &s
	}
	for depth := 0; depth < 64; depth++ {
		if !arr.isAtom() {
			if arr.head() != "store" || len(arr.list) != 4 {
				break
			}
			ssym, soff := linear(t.conv(arr.list[2]))
			switch {
			case soff == off && sameSym(ssym, sym):
				return t.conv(arr.list[3])
			case sameSym(ssym, sym): // same base, another offset
				arr = arr.list[1]
				continue
			}
			return varExpr(8, "mem["+render(t.conv(idx), plainNames{})+"]")
		}
		name := arr.atom
		if name == "pkt0" {
			return &expr{op: opPkt, w: 8, offs: []int{off}, sym: sym}
		}
		if n, ok := t.lookups[name]; ok && n.arr == name {
			return &expr{op: opVal, w: 8, name: n.mapName, offs: []int{off}, sym: sym}
		}
		d, ok := t.def(name)
		if !ok {
			break
		}
		arr = d
	}
	return varExpr(8, "mem["+render(t.conv(idx), plainNames{})+"]")
}

// concat joins bytes of one array into one value, most significant first.
func (t *translator) concat(args []*sx) *expr {
	parts := make([]*expr, len(args))
	for i, a := range args {
		parts[i] = t.conv(a)
	}
	return joinParts(parts)
}

// extract takes bits hi..lo of a value.
func extract(x *expr, hi, lo int) *expr {
	w := hi - lo + 1
	switch {
	case x.isConst():
		return constExpr(w, x.c>>lo)
	case x.op == "concat":
		return extractConcat(x, hi, lo)
	case x.bytes() && lo%8 == 0 && (hi+1)%8 == 0:
		n := len(x.offs)
		if lo/8 >= n {
			return constExpr(w, 0)
		}
		top := min(hi/8, n-1)
		out := *x
		out.offs = x.offs[n-1-top : n-lo/8]
		out.w = w
		return &out
	case lo == 0:
		out := *x
		out.w = w
		return &out
	}
	shifted := &expr{op: ">>", w: x.w, args: []*expr{x, constExpr(x.w, uint64(lo))}}
	return &expr{op: "&", w: w, args: []*expr{shifted, constExpr(x.w, 1<<w-1)}}
}

// simplify folds constant operands.
func simplify(r *expr) *expr {
	if len(r.args) != 2 {
		return r
	}
	a, b := r.args[0], r.args[1]
	if a.isConst() && b.isConst() {
		if c, ok := fold(r.op, a.c, b.c, r.w); ok {
			return constExpr(r.w, c)
		}
	}
	switch {
	case (r.op == "+" || r.op == "|" || r.op == "^" || r.op == "<<" || r.op == ">>") && b.isConst() && b.c == 0:
		return a
	case r.op == "+" && a.isConst() && a.c == 0:
		return b
	case r.op == "+" && b.isConst() && a.op == "+" && len(a.args) == 2 && a.args[1].isConst():
		return simplify(&expr{op: "+", w: r.w, args: []*expr{a.args[0], constExpr(r.w, a.args[1].c+b.c)}})
	case r.op == "+" && b.isConst() && a.op == "+" && len(a.args) == 2 && a.args[0].isConst():
		return simplify(&expr{op: "+", w: r.w, args: []*expr{a.args[1], constExpr(r.w, a.args[0].c+b.c)}})
	case r.op == "&" && b.isConst() && sigBits(a) < 64 && b.c == 1<<sigBits(a)-1:
		return a
	case r.op == "|":
		if j, ok := orBytes(r); ok {
			return j
		}
	}
	return r
}

func fold(op string, a, b uint64, w int) (uint64, bool) {
	switch op {
	case "+":
		return a + b, true
	case "-":
		return a - b, true
	case "*":
		return a * b, true
	case "&":
		return a & b, true
	case "|":
		return a | b, true
	case "^":
		return a ^ b, true
	case "<<":
		return a << b, true
	case ">>":
		return a >> b, true
	}
	return 0, false
}

// plainNames prints bytes without a layout: pkt[12:14].
type plainNames struct{}

func (plainNames) bytesName(r *expr) string { return rawBytes(r, plainNames{}) }
func (plainNames) keyText(_ string, key *expr) string {
	return render(key, plainNames{})
}
func (plainNames) special(*expr) (string, bool) { return "", false }

// rawBytes prints bytes by their offsets; names prints a variable part of
// the offset. The part is parenthesised when it binds looser than "+"
// (pkt[(pkt[59] << 3) + 66], not pkt[pkt[59] << 3 + 66]).
func rawBytes(r *expr, names namer) string {
	base := "pkt"
	if r.op == opVal {
		base = pyIdent(r.name) + ".value"
	}
	var sym string
	if r.sym != nil {
		s, q := renderP(r.sym, names)
		if q < prec["+"] {
			s = "(" + s + ")"
		}
		sym = s + " + "
	}
	n := len(r.offs)
	lo := r.offs[0]
	if r.descending() {
		lo = r.offs[n-1]
	}
	idx := sym + strconv.Itoa(lo)
	if n > 1 {
		idx += ":" + sym + strconv.Itoa(lo+n)
	}
	s := base + "[" + idx + "]"
	if n > 1 && r.descending() {
		s = "le" + strconv.Itoa(8*n) + "(" + s + ")"
	} else if n > 1 && !r.ascending() {
		parts := make([]string, n)
		for i, o := range r.offs {
			parts[i] = sym + strconv.Itoa(o)
		}
		s = base + "[" + strings.Join(parts, ",") + "]"
	}
	return s
}

// width is the number of significant bits of a value: a zero-extended
// byte string has 8 per byte whatever its width.
func sigBits(r *expr) int {
	if r.bytes() {
		return min(r.w, 8*len(r.offs))
	}
	return r.w
}

// byteOf recognises byte k of x: "(x >> 8k) & 255", or x itself narrowed
// to 8 bits for k = 0.
func byteOf(r *expr) (x *expr, k int, ok bool) {
	if r.op == "&" && len(r.args) == 2 && r.args[1].isConst() && r.args[1].c == 0xff {
		s := r.args[0]
		if s.op == ">>" && len(s.args) == 2 && s.args[1].isConst() && s.args[1].c%8 == 0 {
			return s.args[0], int(s.args[1].c / 8), true
		}
	}
	if r.w == 8 && !r.isConst() {
		return r, 0, true
	}
	return nil, 0, false
}

// rejoin folds a concatenation of bytes k+n-1, ..., k of one value back
// into the value (the program stored it and read it back bytewise).
func rejoin(parts []*expr) (*expr, bool) {
	var x *expr
	for i, p := range parts {
		v, k, ok := byteOf(p)
		if !ok || k != len(parts)-1-i {
			return nil, false
		}
		if x == nil {
			x = v
		} else if !sameSym(x, v) {
			return nil, false
		}
	}
	out := *x
	out.w = 8 * len(parts)
	return &out, true
}

// orBytes folds "(b1 << 8) | b0" of packet bytes, as byte-wise loads of
// unaligned fields compile, into one multi-byte value.
func orBytes(r *expr) (*expr, bool) {
	var terms []*expr
	var flat func(*expr)
	flat = func(x *expr) {
		if x.op == "|" {
			for _, a := range x.args {
				flat(a)
			}
			return
		}
		terms = append(terms, x)
	}
	flat(r)
	type piece struct {
		v     *expr
		shift int
	}
	var ps []piece
	for _, t := range terms {
		sh := 0
		if t.op == "<<" && len(t.args) == 2 && t.args[1].isConst() {
			sh, t = int(t.args[1].c), t.args[0]
		}
		if t.op != opPkt || sh%8 != 0 {
			return nil, false
		}
		ps = append(ps, piece{t, sh})
	}
	// Order by shift, most significant first, and require contiguity.
	for i := range ps {
		for j := i + 1; j < len(ps); j++ {
			if ps[j].shift > ps[i].shift {
				ps[i], ps[j] = ps[j], ps[i]
			}
		}
	}
	out := &expr{op: opPkt, w: r.w, sym: ps[0].v.sym}
	for i, p := range ps {
		next := 0
		if i+1 < len(ps) {
			next = ps[i+1].shift + 8*len(ps[i+1].v.offs)
		}
		if p.shift != next || !sameSym(p.v.sym, out.sym) {
			return nil, false
		}
		out.offs = append(out.offs, p.v.offs...)
	}
	return out, true
}

var mirrored = map[string]string{"==": "==", "!=": "!=", "<": ">", ">": "<", "<=": ">=", ">=": "<=",
	"s<": "s>", "s>": "s<", "s<=": "s>=", "s>=": "s<="}

// extractConcat takes bits hi..lo of a concatenation from the parts that
// hold them, so a field of a key built on the stack reads as what was
// stored there.
func extractConcat(x *expr, hi, lo int) *expr {
	var parts []*expr
	off := 0 // bit offset of the current part's least significant bit
	for i := len(x.args) - 1; i >= 0; i-- {
		p := x.args[i]
		top := off + p.w - 1
		if top >= lo && off <= hi {
			parts = append(parts, extract(p, min(hi, top)-off, max(lo, off)-off))
		}
		off += p.w
	}
	if len(parts) == 0 {
		return constExpr(hi-lo+1, 0)
	}
	if len(parts) == 1 {
		return parts[0]
	}
	slices.Reverse(parts)
	return joinParts(parts)
}

// joinParts concatenates values, most significant first, joining bytes of
// one array and folding constants.
func joinParts(parts []*expr) *expr {
	// Flatten nested concatenations first.
	var flat []*expr
	for _, p := range parts {
		if p.op == "concat" {
			flat = append(flat, p.args...)
		} else {
			flat = append(flat, p)
		}
	}
	parts = flat
	w := 0
	allConst := true
	for _, p := range parts {
		w += p.w
		allConst = allConst && p.isConst()
	}
	if allConst && w <= 64 {
		var c uint64
		for _, p := range parts {
			c = c<<p.w | p.c
		}
		return constExpr(w, c)
	}
	// Leading zero bytes only widen the value.
	for len(parts) > 1 && parts[0].isConst() && parts[0].c == 0 {
		parts = parts[1:]
	}
	if len(parts) == 1 {
		out := *parts[0]
		out.w = w
		return &out
	}
	if j, ok := rejoin(parts); ok {
		return j
	}
	first := parts[0]
	joinable := first.bytes()
	for _, p := range parts[1:] {
		joinable = joinable && p.op == first.op && p.name == first.name && sameSym(p.sym, first.sym) && p.w == 8*len(p.offs)
	}
	if joinable && first.w == 8*len(first.offs) {
		out := &expr{op: first.op, w: w, name: first.name, sym: first.sym}
		for _, p := range parts {
			out.offs = append(out.offs, p.offs...)
		}
		return out
	}
	return &expr{op: "concat", w: w, args: parts}
}

// pyIdent is a map's name as a Python identifier: ".rodata" is rodata_.
func pyIdent(name string) string {
	var b strings.Builder
	rest, dot := strings.CutPrefix(name, ".")
	for i, c := range rest {
		if c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9' {
			b.WriteRune(c)
		} else {
			b.WriteByte('_')
		}
	}
	if dot {
		b.WriteByte('_')
	}
	return b.String()
}
