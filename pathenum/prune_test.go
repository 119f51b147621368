package pathenum

import (
	"fmt"
	"math"
	"math/rand"
	"testing"
)

// allEdgePaths lists every path as its edges, by depth-first search.
func allEdgePaths(g *Graph) [][]int32 {
	out := make([][]int32, g.Nodes)
	for i := range g.From {
		out[g.From[i]] = append(out[g.From[i]], int32(i))
	}
	var paths [][]int32
	var walk func(v int32, prefix []int32)
	walk = func(v int32, prefix []int32) {
		if v == g.Dst {
			paths = append(paths, append([]int32(nil), prefix...))
			return
		}
		for _, e := range out[v] {
			walk(g.To[e], append(prefix, e))
		}
	}
	walk(g.Src, nil)
	return paths
}

// TestPruneSkipsExactlyTheCoveredPaths adds dead prefixes while enumerating
// (some taken from paths already produced, some from paths to come) and
// checks that the enumeration produces, longest first and each once, every
// path that no prefix added so far covers. Pruning may reorder paths of
// equal cost (a tie is broken by list positions, which pruning shifts), so
// a path may be missing only once it is covered and the enumeration has
// moved on to shorter paths.
func TestPruneSkipsExactlyTheCoveredPaths(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	for trial := 0; trial < 300; trial++ {
		g := randomDAG(r, 2+r.Intn(14))
		all := allEdgePaths(g)
		cost := func(p []int32) float64 {
			sum := 0.0
			for _, e := range p {
				sum += g.Weight[e]
			}
			return sum
		}
		set := NewPrefixSet()
		e, _ := New(g)
		e.Prune(set)
		produced := map[string]bool{}
		key := func(p []int32) string { return fmt.Sprint(p) }
		// missing checks that every path longer than c (all paths when
		// c is -Inf) came out or is covered.
		missing := func(c float64) {
			for _, q := range all {
				if cost(q) > c && !produced[key(q)] && !set.Covers(q) {
					t.Fatalf("trial %d: live path %v (cost %g) not produced before cost %g", trial, q, cost(q), c)
				}
			}
		}
		last := math.Inf(1)
		for {
			p, ok := e.Next()
			if !ok {
				break
			}
			got := e.Edges(p, nil)
			switch {
			case set.Covers(got):
				t.Fatalf("trial %d: produced a dead path %v", trial, got)
			case produced[key(got)]:
				t.Fatalf("trial %d: produced %v twice", trial, got)
			case p.Cost > last || p.Cost != cost(got):
				t.Fatalf("trial %d: path %v of cost %g (reported %g) after cost %g", trial, got, cost(got), p.Cost, last)
			}
			produced[key(got)], last = true, p.Cost
			missing(p.Cost)
			if r.Intn(3) == 0 {
				// Kill a prefix of some path, possibly one to come.
				q := all[r.Intn(len(all))]
				set.Add(q[:1+r.Intn(len(q))])
			}
		}
		missing(math.Inf(-1))
	}
}

// TestPruneChain: in a chain of 40 diamonds (2^40 paths), killing the
// prefix up to the second heavy side taken leaves the 41 paths with at most
// one heavy side; each pair of heavy sides is refuted once, so at most
// 40·39/2 dead paths come out before the live ones are all found.
func TestPruneChain(t *testing.T) {
	const n = 40
	g := chain(n)
	set := NewPrefixSet()
	e, _ := New(g)
	e.Prune(set)
	count, live := 0, 0
	for {
		p, ok := e.Next()
		if !ok {
			break
		}
		edges := e.Edges(p, nil)
		count++
		if count > n*(n-1)/2+n+1 {
			t.Fatalf("more than %d paths came out", n*(n-1)/2+n+1)
		}
		// Find the second heavy edge (edge 4i of diamond i) and kill the prefix up to it.
		heavy := 0
		for j, ed := range edges {
			if ed%4 == 0 {
				heavy++
				if heavy == 2 {
					set.Add(edges[:j+1])
					break
				}
			}
		}
		if heavy < 2 {
			live++
		}
	}
	if live != n+1 {
		t.Fatalf("%d live paths, want %d", live, n+1)
	}
}

// TestPrefixSetShorterLater: a prefix added after a longer one it starts
// covers the longer one's extensions and its siblings, and a state the
// walk reached before the shorter prefix came is dead after it.
func TestPrefixSetShorterLater(t *testing.T) {
	s := NewPrefixSet()
	s.Add([]int32{1, 2, 3})
	st := s.step(s.step(0, 1), 2)
	if st < 0 || s.Covers([]int32{1, 2}) || !s.Covers([]int32{1, 2, 3, 9}) || s.Covers([]int32{1, 2, 4}) {
		t.Fatalf("after {1,2,3}: state %d, covers {1,2} %v, {1,2,3,9} %v, {1,2,4} %v",
			st, s.Covers([]int32{1, 2}), s.Covers([]int32{1, 2, 3, 9}), s.Covers([]int32{1, 2, 4}))
	}
	s.Add([]int32{1, 2})
	if got := s.step(s.step(0, 1), 2); got != stDead {
		t.Fatalf("walk to {1,2}: state %d, want dead", got)
	}
	if got := s.step(st, 4); got != stDead {
		t.Fatalf("step from the state cached before the shorter prefix: %d, want dead", got)
	}
	if !s.Covers([]int32{1, 2, 4}) || s.Covers([]int32{1, 5}) || s.Len != 2 {
		t.Fatalf("covers {1,2,4} %v, {1,5} %v, %d prefixes", s.Covers([]int32{1, 2, 4}), s.Covers([]int32{1, 5}), s.Len)
	}
	s.Add([]int32{1, 2, 7}) // already covered
	if s.Len != 2 {
		t.Fatalf("a covered prefix was counted: %d", s.Len)
	}
}
