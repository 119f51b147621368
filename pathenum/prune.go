package pathenum

// PrefixSet is a set of dead path prefixes, each a sequence of edges from
// the source. A path is dead when one of the set's prefixes starts it.
// Enumerators that share a PrefixSet (see Enumerator.Prune) stop extending
// dead prefixes, so one refuted prefix removes every path through it.
type PrefixSet struct {
	child   map[uint64]int32 // trie: state<<32 | edge → state
	dead    []bool           // per trie state: a whole prefix ends here
	version int32            // bumped on every Add
	Len     int              // prefixes added
}

// Trie states of a prefix: an index into dead, or one of these.
const (
	stOff  int32 = -1 // no prefix in the set starts with this path: none ever will of its extensions unless the set grows
	stDead int32 = -2 // a prefix of the set starts this path
)

// NewPrefixSet returns an empty set.
func NewPrefixSet() *PrefixSet {
	return &PrefixSet{child: map[uint64]int32{}, dead: []bool{false}}
}

// Add records that every path starting with edges is dead.
func (s *PrefixSet) Add(edges []int32) {
	st := int32(0)
	for _, e := range edges {
		if s.dead[st] {
			return // a shorter prefix already covers it
		}
		k := uint64(st)<<32 | uint64(uint32(e))
		next, ok := s.child[k]
		if !ok {
			next = int32(len(s.dead))
			s.dead = append(s.dead, false)
			s.child[k] = next
		}
		st = next
	}
	s.dead[st] = true
	s.Len++
	s.version++
}

// step extends a trie state by one edge.
func (s *PrefixSet) step(st, edge int32) int32 {
	if st < 0 {
		return st
	}
	next, ok := s.child[uint64(st)<<32|uint64(uint32(edge))]
	switch {
	case !ok:
		return stOff
	case s.dead[next]:
		return stDead
	}
	return next
}

// Covers reports whether a prefix of the set starts the path edges.
func (s *PrefixSet) Covers(edges []int32) bool {
	st := int32(0)
	if s.dead[0] {
		return true
	}
	for _, e := range edges {
		if st = s.step(st, e); st < 0 {
			return st == stDead
		}
	}
	return false
}

// Prune makes the enumerator skip every path that a prefix of s starts.
// Several enumerators of the same graph may share one set.
func (e *Enumerator) Prune(s *PrefixSet) { e.prune = s }

// state returns the trie state of element k of node v's list (the prefix
// it stands for), recomputing it when the set grew since it was cached.
func (e *Enumerator) state(v, k int32) int32 {
	s := e.prune
	if a := e.alias[v]; a >= 0 {
		return s.step(e.state(e.g.From[a], k), a)
	}
	el := &e.lists[v][k]
	if el.ver == s.version+1 {
		return el.st
	}
	st := int32(0)
	if v != e.g.Src {
		st = s.step(e.state(e.g.From[el.edge], el.idx), el.edge)
	} else if s.dead[0] {
		st = stDead
	}
	el.st, el.ver = st, s.version+1
	return st
}
