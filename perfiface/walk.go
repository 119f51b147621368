package perfiface

import (
	"fmt"
	"slices"
	"strings"
)

// Header walks: the IPv6 extension headers a parser steps over by their
// lengths. The offset of a header deep in the chain is a sum that grows
// with every header it steps over (58 + ((pkt[59] << 3) + 8) + 8 + ...);
// named, the conditions read pkt.ipv6.ext[1].hdr_len, or where the walk
// took other steps than the options headers' (hdr_len + 1) * 8,
// pkt.ipv6.after("opt frag").next_hdr.
//
// A step is recognised by its shape, not by the header's type, so a name
// means the same bytes as the offset it replaces, whatever the packet:
//   - "opt": (hdr_len << 3) + 8, hop-by-hop, routing and destination
//     options (RFC 8200);
//   - "ah": (hdr_len << 2) + 8, the authentication header (RFC 4302);
//   - "frag": 8, the fragment header, a constant. It shows where a header
//     is stepped over without a term: the header after it is 8 bytes
//     further on.

// Step kinds, as the Python runtime's IPv6.after takes them.
const (
	stepOpt  = "opt"
	stepAH   = "ah"
	stepFrag = "frag"
)

// sumTerms flattens an offset into its non-constant terms and constant.
func sumTerms(e *expr) ([]*expr, int) {
	switch {
	case e == nil:
		return nil, 0
	case e.isConst():
		return nil, int(int64(e.c))
	case e.op == "+" && len(e.args) == 2:
		t1, c1 := sumTerms(e.args[0])
		t2, c2 := sumTerms(e.args[1])
		return append(t1, t2...), c1 + c2
	}
	return []*expr{e}, 0
}

// walk is a place in the extension-header chain: the steps taken from the
// end of the fixed header, and a byte offset from there.
type walk struct {
	steps []string
	off   int
}

// allOpt reports whether every step is an options header's.
func (w walk) allOpt() bool {
	for _, s := range w.steps {
		if s != stepOpt {
			return false
		}
	}
	return true
}

// header names the header the walk reaches: pkt.ipv6.ext[2], or
// pkt.ipv6.after("opt frag").
func (w walk) header() string {
	if w.allOpt() {
		return fmt.Sprintf("pkt.ipv6.ext[%d]", len(w.steps))
	}
	return `pkt.ipv6.after("` + strings.Join(w.steps, " ") + `")`
}

// extWalk recognises an offset into the extension-header chain.
func (l layout) extWalk(e *expr) (walk, bool) {
	terms, c := sumTerms(e)
	return l.extOffset(terms, c)
}

// extOffset recognises the offset of terms + c in the chain: every term is
// a step over the header whose hdr_len byte it reads, each header stepped
// over by at most one term, the headers between them stepped over as
// fragments. Bytes at 8 or more past the last step stay relative to it
// (the header there may be longer than a fragment's).
func (l layout) extOffset(terms []*expr, c int) (walk, bool) {
	if l.l3 != "ipv6" {
		return walk{}, false
	}
	type step struct {
		kind   string
		before []string // the steps to the header, as the term's offset takes them
	}
	var found []step
	n := 0
	for _, t := range terms {
		b, kind, ok := stepByte(t)
		if !ok {
			return walk{}, false
		}
		bt, bc := sumTerms(b.sym)
		at, ok := l.extOffset(bt, bc+b.offs[0])
		if !ok || at.off < 1 || (at.off-1)%8 != 0 {
			return walk{}, false
		}
		// hdr_len is byte 1 of its header: fragments fill the rest.
		for range (at.off - 1) / 8 {
			at.steps = append(at.steps, stepFrag)
		}
		found = append(found, step{kind, at.steps})
		n = max(n, len(at.steps)+1)
	}
	steps := make([]string, n)
	for _, f := range found {
		if steps[len(f.before)] != "" {
			return walk{}, false // two terms step over one header
		}
		steps[len(f.before)] = f.kind
	}
	for i, s := range steps {
		if s == "" {
			steps[i] = stepFrag
		}
	}
	// Every term reaches its header the way the chain does.
	for _, f := range found {
		if !slices.Equal(f.before, steps[:len(f.before)]) {
			return walk{}, false
		}
	}
	off := c - (l.l3off + 40) - 8*len(steps)
	if off < 0 {
		return walk{}, false
	}
	return walk{steps, off}, true
}

// stepByte recognises a step over a header of its hdr_len byte: hdr_len
// << 3 (or * 8) for an options header, << 2 (or * 4) for an
// authentication header.
func stepByte(t *expr) (*expr, string, bool) {
	if (t.op != "<<" && t.op != "*") || len(t.args) != 2 || !t.args[1].isConst() {
		return nil, "", false
	}
	var kind string
	switch {
	case t.op == "<<" && t.args[1].c == 3, t.op == "*" && t.args[1].c == 8:
		kind = stepOpt
	case t.op == "<<" && t.args[1].c == 2, t.op == "*" && t.args[1].c == 4:
		kind = stepAH
	default:
		return nil, "", false
	}
	b := t.args[0]
	if b.op != opPkt || len(b.offs) != 1 {
		return nil, "", false
	}
	return b, kind, true
}

// extName names packet bytes in the chain by the walk:
// pkt.ipv6.ext[1].hdr_len, pkt.ipv6.ext[2][2:4],
// pkt.ipv6.after("frag opt").next_hdr; "" if r is not there.
func (l layout) extName(r *expr) string {
	terms, c := sumTerms(r.sym)
	w, ok := l.extOffset(terms, c+r.offs[0])
	if !ok {
		return ""
	}
	n := len(r.offs)
	h := w.header()
	switch {
	case w.off == 0 && n == 1:
		return h + ".next_hdr"
	case w.off == 1 && n == 1:
		return h + ".hdr_len"
	case n == 1:
		return fmt.Sprintf("%s[%d]", h, w.off)
	}
	return fmt.Sprintf("%s[%d:%d]", h, w.off, w.off+n)
}

// tcpHLen names a TCP header's length in bytes where the header lies
// past a walk: le16(h[12:14]) >> 2 & 60, as compilers write
// (h[12] >> 4) * 4, is h.tcp_hlen. A header 8n bytes past the walk's
// last step is named as n fragment headers further on: the same bytes.
func (l layout) tcpHLen(r *expr) (string, bool) {
	if r.op != "&" || len(r.args) != 2 || !r.args[1].isConst() || r.args[1].c != 60 {
		return "", false
	}
	sh := r.args[0]
	if sh.op != ">>" || len(sh.args) != 2 || !sh.args[1].isConst() || sh.args[1].c != 2 {
		return "", false
	}
	b := sh.args[0]
	if b.op != opPkt || b.sym == nil || len(b.offs) != 2 || !b.descending() {
		return "", false
	}
	terms, c := sumTerms(b.sym)
	w, ok := l.extOffset(terms, c+b.offs[1])
	if !ok || w.off < 12 || (w.off-12)%8 != 0 {
		return "", false
	}
	// Past the last step by 8s: fragment headers, as far as the bytes go.
	for ; w.off > 12; w.off -= 8 {
		w.steps = append(w.steps, stepFrag)
	}
	return w.header() + ".tcp_hlen", true
}
