package symex

// pmap is a map that a path's states share: a state's copy (fork) costs
// nothing, writes go to a layer of its own over its parent's, and reads
// walk the layers. A parser loop unrolled 255 times makes paths of
// thousands of edges; copying the facts a path has gathered at every edge
// made symbolic execution quadratic in the path's length. The chain of
// layers is flattened into one map every maxLayers forks, so a read
// visits at most maxLayers maps and a fork costs O(n/maxLayers) amortized.
type pmap[K comparable, V any] struct {
	own    map[K]V
	parent *pmap[K, V]
	depth  int // layers below this one
}

const maxLayers = 16

func newPmap[K comparable, V any]() *pmap[K, V] { return &pmap[K, V]{} }

// get returns the value of k in the newest layer that holds it.
func (m *pmap[K, V]) get(k K) (V, bool) {
	for l := m; l != nil; l = l.parent {
		if v, ok := l.own[k]; ok {
			return v, true
		}
	}
	var zero V
	return zero, false
}

// set writes k in m's own layer.
func (m *pmap[K, V]) set(k K, v V) {
	if m.own == nil {
		m.own = map[K]V{}
	}
	m.own[k] = v
}

// fork returns a map with m's contents whose writes m does not see. m must
// not be written after it is forked (the states of a path are frozen once
// the next edge's state is made from them).
func (m *pmap[K, V]) fork() *pmap[K, V] {
	base := m
	if len(m.own) == 0 && m.parent != nil {
		base = m.parent // skip empty layers
	}
	if len(base.own) == 0 && base.parent == nil {
		return &pmap[K, V]{}
	}
	if base.depth+1 >= maxLayers {
		return &pmap[K, V]{own: base.flat()}
	}
	return &pmap[K, V]{parent: base, depth: base.depth + 1}
}

// flat returns m's contents in one new map.
func (m *pmap[K, V]) flat() map[K]V {
	var chain []*pmap[K, V]
	n := 0
	for l := m; l != nil; l = l.parent {
		chain = append(chain, l)
		n += len(l.own)
	}
	out := make(map[K]V, n)
	for i := len(chain) - 1; i >= 0; i-- {
		for k, v := range chain[i].own {
			out[k] = v
		}
	}
	return out
}
