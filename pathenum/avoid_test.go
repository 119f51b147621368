package pathenum

import (
	"math/rand"
	"slices"
	"testing"
)

// contains reports whether path takes the edges of pat in order.
func contains(path, pat []int32) bool {
	j := 0
	for _, e := range path {
		if j < len(pat) && e == pat[j] {
			j++
		}
	}
	return j == len(pat)
}

// TestAvoidLeavesOutExactlyTheFamilies compares, on random DAGs with random
// edge sequences taken from their own paths, the paths the product graph
// enumerates (longest first, through labels) with the paths of the graph
// that take none of the sequences.
func TestAvoidLeavesOutExactlyTheFamilies(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	for trial := range 300 {
		g := randomDAG(r, 4+r.Intn(10))
		all := allEdgePaths(g)
		var pats [][]int32
		for range r.Intn(4) {
			p := all[r.Intn(len(all))]
			var pat []int32
			for _, e := range p {
				if r.Intn(3) == 0 {
					pat = append(pat, e)
				}
			}
			if len(pat) > 0 {
				pats = append(pats, pat)
			}
		}
		var want [][]int32
		for _, p := range all {
			if !slices.ContainsFunc(pats, func(pat []int32) bool { return contains(p, pat) }) {
				want = append(want, p)
			}
		}
		pg, err := Avoid(g, pats, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		en, err := New(pg)
		if err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		var got [][]int32
		last := 1e18
		for {
			p, ok := en.Next()
			if !ok {
				break
			}
			if p.Cost > last {
				t.Fatalf("trial %d: cost %v after %v", trial, p.Cost, last)
			}
			last = p.Cost
			got = append(got, en.Edges(p, nil))
		}
		key := func(ps [][]int32) []string {
			var s []string
			for _, p := range ps {
				s = append(s, string(slices.Collect(func(yield func(rune) bool) {
					for _, e := range p {
						if !yield(rune(e + 'A')) {
							return
						}
					}
				})))
			}
			slices.Sort(s)
			return s
		}
		if !slices.Equal(key(got), key(want)) {
			t.Fatalf("trial %d: patterns %v: got %d paths %v, want %d %v", trial, pats, len(got), key(got), len(want), key(want))
		}
	}
}

// TestAvoidSharesNodes checks that the product grows with the sequences'
// progress, not with the paths: a chain of n diamonds whose pattern takes
// the first and the last diamond's upper side keeps two copies of each
// node in between, not 2^n.
func TestAvoidSharesNodes(t *testing.T) {
	const n = 40
	g := &Graph{Nodes: 2*n + 1, Src: 0, Dst: 2 * n}
	for i := range n {
		a, mid, b := int32(2*i), int32(2*i+1), int32(2*i+2)
		g.From = append(g.From, a, mid, a)
		g.To = append(g.To, mid, b, b)
		g.Weight = append(g.Weight, 1, 1, 0)
	}
	pat := []int32{0, int32(3 * (n - 1))} // upper side of the first and the last diamond
	pg, err := Avoid(g, [][]int32{pat}, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if pg.Nodes > 2*g.Nodes {
		t.Fatalf("%d nodes for a graph of %d", pg.Nodes, g.Nodes)
	}
	en, _ := New(pg)
	p, _ := en.Next()
	if p.Cost != 2*n-2 {
		t.Fatalf("longest path %v, want %v (all upper sides but one)", p.Cost, 2*n-2)
	}
}
