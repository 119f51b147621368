package pathenum

// PrefixSet is a set of dead path prefixes, each a sequence of edges from
// the source. A path is dead when one of the set's prefixes starts it.
// Enumerators that share a PrefixSet (see Enumerator.Prune) stop extending
// dead prefixes, so one refuted prefix removes every path through it.
type PrefixSet struct {
	// A trie of edges in three parallel arrays indexed by state (state 0
	// is the empty prefix): the edge into the state, its first child and
	// its next sibling (0: none). A state where a whole prefix ends has
	// child dead and no children: its extensions are dead too. Children
	// are found by a walk over the siblings; a state has at most as many
	// as its graph node has out-edges (two for a branch). Twelve bytes a
	// state, a third of what a hash map of (state, edge) pairs takes.
	edge, child, next []int32
	version           int32 // bumped on every Add
	Len               int   // prefixes added
}

const dead int32 = -1 // child of a state where a prefix ends

// Trie states of a prefix: an index into the arrays, or one of these.
const (
	stOff  int32 = -1 // no prefix in the set starts with this path: none ever will of its extensions unless the set grows
	stDead int32 = -2 // a prefix of the set starts this path
)

// NewPrefixSet returns an empty set.
func NewPrefixSet() *PrefixSet {
	return &PrefixSet{edge: []int32{-1}, child: []int32{0}, next: []int32{0}}
}

// find returns the child of state st along edge e, or 0.
func (s *PrefixSet) find(st, e int32) int32 {
	for c := s.child[st]; c > 0; c = s.next[c] {
		if s.edge[c] == e {
			return c
		}
	}
	return 0
}

// Add records that every path starting with edges is dead.
func (s *PrefixSet) Add(edges []int32) {
	st := int32(0)
	for _, e := range edges {
		if s.child[st] == dead {
			return // a shorter prefix already covers it
		}
		next := s.find(st, e)
		if next == 0 {
			next = int32(len(s.edge))
			s.edge = append(s.edge, e)
			s.child = append(s.child, 0)
			s.next = append(s.next, s.child[st])
			s.child[st] = next
		}
		st = next
	}
	// The states below st stay in the arrays, unreachable.
	s.child[st] = dead
	s.Len++
	s.version++
}

// rootDead reports whether the empty prefix is dead (every path is).
func (s *PrefixSet) rootDead() bool { return s.child[0] == dead }

// step extends a trie state by one edge.
func (s *PrefixSet) step(st, edge int32) int32 {
	switch {
	case st < 0:
		return st
	case s.child[st] == dead:
		return stDead
	}
	next := s.find(st, edge)
	switch {
	case next == 0:
		return stOff
	case s.child[next] == dead:
		return stDead
	}
	return next
}

// Covers reports whether a prefix of the set starts the path edges.
func (s *PrefixSet) Covers(edges []int32) bool {
	st := int32(0)
	if s.rootDead() {
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
		return s.step(e.state(e.g.From[a], k), e.g.label(a))
	}
	el := e.lists[v].at(k)
	if el.ver == s.version+1 {
		return el.st
	}
	st := int32(0)
	if v != e.g.Src {
		st = s.step(e.state(e.g.From[el.edge], el.idx), e.g.label(el.edge))
	} else if s.rootDead() {
		st = stDead
	}
	el.st, el.ver = st, s.version+1
	return st
}
