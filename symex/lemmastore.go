package symex

import (
	"fmt"
	"slices"
	"sync"
)

// Lemmas is a store of refuted windows shared by the Checkers of a search,
// with the families proven impossible (Family, for the enumeration to leave
// out, see Families) and the twins still to prove (twins.go). The zero
// value is ready; it is safe for concurrent use.
type Lemmas struct {
	mu     sync.Mutex
	byLast map[int32][]lemma // by the window's last edge
	n      int
	size   int // bytes of text held
	// families are edge sequences no path that takes them can follow
	// (proven by Family), in the order they were found.
	families [][]int32
	famKeys  map[string]bool
	pending  []twin          // families to prove (see propose)
	tried    map[string]bool // twins taken from pending, proven or not
}

// claim reports whether t is neither a family nor taken by another
// Checker, and takes it.
func (ls *Lemmas) claim(t twin) bool {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	k := fmt.Sprint(t.edges)
	if ls.famKeys[k] || ls.tried[k] {
		return false
	}
	if ls.tried == nil {
		ls.tried = map[string]bool{}
	}
	ls.tried[k] = true
	return true
}

func (ls *Lemmas) queue(t twin) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	ls.pending = append(ls.pending, t)
}

func (ls *Lemmas) dequeue() (twin, bool) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if len(ls.pending) == 0 {
		return twin{}, false
	}
	t := ls.pending[len(ls.pending)-1]
	ls.pending = ls.pending[:len(ls.pending)-1]
	return t, true
}

// Covering returns the length of the shortest prefix of path that takes
// every edge of a family, or 0.
func (ls *Lemmas) Covering(path []int32) int {
	ls.mu.Lock()
	fams := ls.families
	ls.mu.Unlock()
	best := 0
	for _, f := range fams {
		if n := takes(path, f); n > 0 && (best == 0 || n < best) {
			best = n
		}
	}
	return best
}

// Takes reports whether path takes the edges of fam in order.
func Takes(path, fam []int32) bool { return takes(path, fam) > 0 }

// takes returns the length of the shortest prefix of path that takes the
// edges of fam in order, or 0.
func takes(path, fam []int32) int {
	j := 0
	for i, e := range path {
		if e == fam[j] {
			if j++; j == len(fam) {
				return i + 1
			}
		}
	}
	return 0
}

// Families returns the families (see Family) proven impossible so far, in
// the order they were found.
func (ls *Lemmas) Families() [][]int32 {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return ls.families[:len(ls.families):len(ls.families)]
}

func (ls *Lemmas) hasFamily(edges []int32) bool {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return ls.famKeys[fmt.Sprint(edges)]
}

func (ls *Lemmas) addFamily(edges []int32) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	k := fmt.Sprint(edges)
	if ls.famKeys[k] {
		return
	}
	if ls.famKeys == nil {
		ls.famKeys = map[string]bool{}
	}
	ls.famKeys[k] = true
	ls.families = append(ls.families, slices.Clone(edges))
}

type lemma struct {
	edges []int32 // the core's edges, in path order
	text  string  // the window's formula in canonical names
}

// maxLemmaBytes bounds the text a store holds; past it, nothing more is
// learned (what was learned still prunes).
const maxLemmaBytes = 64 << 20

// Len returns the number of lemmas held.
func (ls *Lemmas) Len() int {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return ls.n
}

func (ls *Lemmas) add(edges []int32, text string) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.size+len(text) > maxLemmaBytes {
		return
	}
	last := edges[len(edges)-1]
	for _, l := range ls.byLast[last] {
		if l.text == text && slices.Equal(l.edges, edges) {
			return
		}
	}
	if ls.byLast == nil {
		ls.byLast = map[int32][]lemma{}
	}
	ls.byLast[last] = append(ls.byLast[last], lemma{slices.Clone(edges), text})
	ls.n++
	ls.size += len(text)
}

// candidates returns the lemmas whose window ends with edge e.
func (ls *Lemmas) candidates(e int32) []lemma {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return ls.byLast[e]
}
