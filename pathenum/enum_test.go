package pathenum

import (
	"math/rand"
	"sort"
	"testing"
)

// randomDAG builds a DAG on n nodes where node 0 reaches every node and every
// node reaches n-1, with integer weights so that sums compare exactly.
func randomDAG(r *rand.Rand, n int) *Graph {
	g := &Graph{Nodes: n, Src: 0, Dst: int32(n - 1)}
	add := func(a, b int) {
		g.From = append(g.From, int32(a))
		g.To = append(g.To, int32(b))
		g.Weight = append(g.Weight, float64(r.Intn(10)))
	}
	for v := 1; v < n; v++ {
		add(r.Intn(v), v) // reachable from the source
		if v < n-1 {
			add(v, v+1+r.Intn(n-1-v)) // reaches the sink
		}
		for k := r.Intn(3); k > 0; k-- {
			add(r.Intn(v), v)
		}
	}
	return g
}

// allPaths lists every path's cost by depth-first search.
func allPaths(g *Graph) []float64 {
	out := make([][]int, g.Nodes)
	for i := range g.From {
		out[g.From[i]] = append(out[g.From[i]], i)
	}
	var costs []float64
	var walk func(v int32, c float64)
	walk = func(v int32, c float64) {
		if v == g.Dst {
			costs = append(costs, c)
			return
		}
		for _, e := range out[v] {
			walk(g.To[e], c+g.Weight[e])
		}
	}
	walk(g.Src, 0)
	sort.Sort(sort.Reverse(sort.Float64Slice(costs)))
	return costs
}

func TestEnumeratesAllPathsLongestFirst(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for trial := 0; trial < 200; trial++ {
		g := randomDAG(r, 2+r.Intn(12))
		want := allPaths(g)
		e, err := New(g)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		var got []float64
		for {
			p, ok := e.Next()
			if !ok {
				break
			}
			edges := e.Edges(p, nil)
			// The reconstructed path is a real source-to-sink path of that cost.
			sum, at := 0.0, g.Src
			key := ""
			for _, ed := range edges {
				if g.From[ed] != at {
					t.Fatalf("trial %d: path %d is not connected", trial, p.Rank)
				}
				sum += g.Weight[ed]
				at = g.To[ed]
				key += string(rune(ed + 1))
			}
			if at != g.Dst || sum != p.Cost {
				t.Fatalf("trial %d: path %d ends at %d with cost %g, want %d and %g", trial, p.Rank, at, sum, g.Dst, p.Cost)
			}
			if seen[key] {
				t.Fatalf("trial %d: path %d produced twice", trial, p.Rank)
			}
			seen[key] = true
			got = append(got, p.Cost)
		}
		if len(got) != len(want) {
			t.Fatalf("trial %d: %d paths, want %d", trial, len(got), len(want))
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("trial %d: path %d costs %g, want %g", trial, i, got[i], want[i])
			}
		}
	}
}

func TestRejectsBackwardEdges(t *testing.T) {
	g := &Graph{Nodes: 2, Src: 0, Dst: 1, From: []int32{1}, To: []int32{0}, Weight: []float64{1}}
	if _, err := New(g); err == nil {
		t.Fatal("backward edge accepted")
	}
}

// chain builds n diamonds in a row: 2^n paths.
func chain(n int) *Graph {
	g := &Graph{Nodes: 3*n + 1, Src: 0, Dst: int32(3 * n)}
	for i := 0; i < n; i++ {
		a := int32(3 * i)
		g.From = append(g.From, a, a, a+1, a+2)
		g.To = append(g.To, a+1, a+2, a+3, a+3)
		g.Weight = append(g.Weight, float64(i+1), 0, 1, 0)
	}
	return g
}

func BenchmarkNextPath(b *testing.B) {
	e, _ := New(chain(64))
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := e.Next(); !ok {
			b.Fatal("exhausted")
		}
	}
	b.ReportMetric(float64(e.Elements()*16)/float64(b.N), "bytes/path")
}
