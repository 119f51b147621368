package interp

import (
	"bytes"
	"encoding/binary"
	"math/bits"
)

// lpmTrie is the kernel's LPM trie (kernel/bpf/lpm_trie.c), node for node:
// a path-compressed binary trie whose nodes hold a prefix, with
// intermediate nodes (no value) where two prefixes diverge. Keys are
// struct bpf_lpm_trie_key_u8: a 32-bit prefix length, then the data.
type lpmTrie struct {
	root     *lpmNode
	dataSize int
	n        int
	limit    int // max_entries
}

type lpmNode struct {
	child     [2]*lpmNode
	prefixlen uint32
	im        bool // intermediate: no value
	data      []byte
	value     []byte
}

func (t *lpmTrie) maxPrefix() uint32 { return uint32(t.dataSize * 8) }

func extractBit(data []byte, i uint32) int {
	return int(data[i/8]>>(7-i%8)) & 1
}

// match is longest_prefix_match: the leading bits node and key share, up to
// the shorter of their prefixes.
func match(n *lpmNode, prefixlen uint32, data []byte) uint32 {
	limit := min(n.prefixlen, prefixlen)
	var l uint32
	for i := 0; l < limit && i < len(data); i++ {
		if x := n.data[i] ^ data[i]; x != 0 {
			l += uint32(bits.LeadingZeros8(x))
			break
		}
		l += 8
	}
	return min(l, limit)
}

func splitKey(key []byte) (uint32, []byte) {
	return binary.LittleEndian.Uint32(key), key[4:]
}

// lookup is trie_lookup_elem; it also returns the nodes visited.
func (t *lpmTrie) lookup(key []byte) ([]byte, int) {
	pl, data := splitKey(key)
	var found *lpmNode
	visited := 0
	for n := t.root; n != nil; {
		visited++
		ml := match(n, pl, data)
		if ml == t.maxPrefix() {
			found = n
			break
		}
		if ml < n.prefixlen {
			break
		}
		if !n.im {
			found = n
		}
		n = n.child[extractBit(data, n.prefixlen)]
	}
	if found == nil {
		return nil, visited
	}
	return found.value, visited
}

// update is trie_update_elem; it returns 0 or a negative errno.
func (t *lpmTrie) update(key, value []byte, flags uint64) (int64, int) {
	pl, data := splitKey(key)
	if flags > flagExist || pl > t.maxPrefix() {
		return -errEINVAL, 0
	}
	nn := &lpmNode{prefixlen: pl, data: bytes.Clone(data), value: bytes.Clone(value)}
	slot := &t.root
	var n *lpmNode
	var ml uint32
	visited := 0
	for n = *slot; n != nil; n = *slot {
		visited++
		ml = match(n, pl, data)
		if n.prefixlen != ml || n.prefixlen == pl {
			break
		}
		slot = &n.child[extractBit(data, n.prefixlen)]
	}
	check := func() int64 {
		switch {
		case flags == flagExist:
			return -errNOENT
		case t.n >= t.maxEntries():
			return -errENOSPC
		}
		t.n++
		return 0
	}
	if n == nil {
		if r := check(); r != 0 {
			return r, visited
		}
		*slot = nn
		return 0, visited
	}
	if n.prefixlen == ml {
		if !n.im {
			if flags == flagNoExist {
				return -errEEXIST, visited
			}
		} else if r := check(); r != 0 {
			return r, visited
		}
		nn.child = n.child
		*slot = nn
		return 0, visited
	}
	if r := check(); r != 0 {
		return r, visited
	}
	if ml == pl {
		nn.child[extractBit(n.data, ml)] = n
		*slot = nn
		return 0, visited
	}
	im := &lpmNode{prefixlen: ml, im: true, data: bytes.Clone(n.data)}
	if extractBit(data, ml) == 1 {
		im.child = [2]*lpmNode{n, nn}
	} else {
		im.child = [2]*lpmNode{nn, n}
	}
	*slot = im
	return 0, visited
}

func (t *lpmTrie) maxEntries() int { return t.limit }

// del is trie_delete_elem.
func (t *lpmTrie) del(key []byte) (int64, int) {
	pl, data := splitKey(key)
	if pl > t.maxPrefix() {
		return -errEINVAL, 0
	}
	trim, trim2 := &t.root, &t.root
	var parent, n *lpmNode
	var ml uint32
	visited := 0
	for n = *trim; n != nil; n = *trim {
		visited++
		ml = match(n, pl, data)
		if n.prefixlen != ml || n.prefixlen == pl {
			break
		}
		parent = n
		trim2 = trim
		trim = &n.child[extractBit(data, n.prefixlen)]
	}
	if n == nil || n.prefixlen != pl || n.prefixlen != ml || n.im {
		return -errNOENT, visited
	}
	t.n--
	switch {
	case n.child[0] != nil && n.child[1] != nil:
		n.im = true
		n.value = nil
	case parent != nil && parent.im && n.child[0] == nil && n.child[1] == nil:
		if n == parent.child[0] {
			*trim2 = parent.child[1]
		} else {
			*trim2 = parent.child[0]
		}
	case n.child[0] != nil:
		*trim = n.child[0]
	case n.child[1] != nil:
		*trim = n.child[1]
	default:
		*trim = nil
	}
	return 0, visited
}

// walk calls f with the key and value of every entry, in pre-order.
func (t *lpmTrie) walk(f func(key, val []byte)) {
	var rec func(n *lpmNode)
	rec = func(n *lpmNode) {
		if n == nil {
			return
		}
		if !n.im {
			key := binary.LittleEndian.AppendUint32(nil, n.prefixlen)
			f(append(key, n.data...), n.value)
		}
		rec(n.child[0])
		rec(n.child[1])
	}
	rec(t.root)
}
