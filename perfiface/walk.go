package perfiface

import "fmt"

// Header walks: the IPv6 extension headers a parser steps over by their
// lengths. The offset of ext[k] is a sum that grows with every header
// (58 + ((pkt[59] << 3) + 8) + ((pkt[...] << 3) + 8) ...); named, the
// conditions read pkt.ipv6.ext[1].hdr_len instead.

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

// extWalk recognises an offset c bytes into the IPv6 extension header
// ext[k] (k = 0: the one after the fixed header): the fixed header's end
// plus, for each header before ext[k], (hdr_len << 3) + 8.
func (l layout) extWalk(e *expr) (k, c int, ok bool) {
	terms, c := sumTerms(e)
	return l.extOffset(terms, c)
}

func (l layout) extOffset(terms []*expr, c int) (k, off int, ok bool) {
	if l.l3 != "ipv6" {
		return 0, 0, false
	}
	k = len(terms)
	seen := make([]bool, k)
	for _, t := range terms {
		b, ok := hdrLenByte(t)
		if !ok {
			return 0, 0, false
		}
		bt, bc := sumTerms(b.sym)
		j, at, ok := l.extOffset(bt, bc+b.offs[0])
		if !ok || at != 1 || j >= k || seen[j] {
			return 0, 0, false
		}
		seen[j] = true
	}
	off = c - (l.l3off + 40) - 8*k
	return k, off, off >= 0
}

// hdrLenByte recognises hdr_len << 3 (or * 8) of a packet byte.
func hdrLenByte(t *expr) (*expr, bool) {
	if (t.op != "<<" && t.op != "*") || len(t.args) != 2 || !t.args[1].isConst() {
		return nil, false
	}
	if (t.op == "<<" && t.args[1].c != 3) || (t.op == "*" && t.args[1].c != 8) {
		return nil, false
	}
	b := t.args[0]
	if b.op != opPkt || len(b.offs) != 1 {
		return nil, false
	}
	return b, true
}

// extName names packet bytes inside an extension header by the walk:
// pkt.ipv6.ext[1].hdr_len, pkt.ipv6.ext[2][2:4]; "" if r is not there.
func (l layout) extName(r *expr) string {
	terms, c := sumTerms(r.sym)
	k, off, ok := l.extOffset(terms, c+r.offs[0])
	if !ok || k == 0 && off < 0 {
		return ""
	}
	n := len(r.offs)
	switch {
	case off == 0 && n == 1:
		return fmt.Sprintf("pkt.ipv6.ext[%d].next_hdr", k)
	case off == 1 && n == 1:
		return fmt.Sprintf("pkt.ipv6.ext[%d].hdr_len", k)
	case n == 1:
		return fmt.Sprintf("pkt.ipv6.ext[%d][%d]", k, off)
	}
	return fmt.Sprintf("pkt.ipv6.ext[%d][%d:%d]", k, off, off+n)
}
