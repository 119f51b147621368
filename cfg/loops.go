package cfg

import (
	"fmt"
	"sort"

	"github.com/dpperf/dpperf/bpfprog"
)

// Loop is a natural loop of one function: the blocks that reach a back edge
// into Header without passing through Header.
type Loop struct {
	Header int          // block index
	Body   map[int]bool // block indices, Header included
	Latch  []int        // sources of the back edges
	Parent *Loop
	Insn   int // first instruction of the header, for messages
}

// findLoops computes dominators and the natural loops of f; it rejects
// irreducible control flow.
func findLoops(p *bpfprog.Program, f *Func) error {
	n := len(f.Blocks)
	preds := make([][]int, n)
	for b := range f.Blocks {
		for _, s := range f.Blocks[b].succs() {
			preds[s] = append(preds[s], b)
		}
	}
	// Reverse postorder from the entry block.
	order := make([]int, 0, n)
	seen := make([]bool, n)
	var dfs func(int)
	dfs = func(b int) {
		seen[b] = true
		for _, s := range f.Blocks[b].succs() {
			if !seen[s] {
				dfs(s)
			}
		}
		order = append(order, b)
	}
	dfs(0)
	rpo := make([]int, n)
	for i := range rpo {
		rpo[i] = -1
	}
	for i, b := range order {
		rpo[b] = len(order) - 1 - i
	}
	// Iterative dominators (Cooper, Harvey, Kennedy).
	idom := make([]int, n)
	for i := range idom {
		idom[i] = -1
	}
	idom[0] = 0
	intersect := func(a, b int) int {
		for a != b {
			for rpo[a] > rpo[b] {
				a = idom[a]
			}
			for rpo[b] > rpo[a] {
				b = idom[b]
			}
		}
		return a
	}
	for changed := true; changed; {
		changed = false
		for i := len(order) - 1; i >= 0; i-- {
			b := order[i]
			if b == 0 {
				continue
			}
			nd := -1
			for _, q := range preds[b] {
				if idom[q] < 0 {
					continue
				}
				if nd < 0 {
					nd = q
				} else {
					nd = intersect(q, nd)
				}
			}
			if nd != idom[b] {
				idom[b], changed = nd, true
			}
		}
	}
	dominates := func(a, b int) bool {
		for idom[b] >= 0 {
			if a == b {
				return true
			}
			if b == 0 {
				return false
			}
			b = idom[b]
		}
		return false
	}
	// Back edges: a retreating edge in RPO must go to a dominator.
	byHeader := map[int]*Loop{}
	for b := 0; b < n; b++ {
		if rpo[b] < 0 {
			continue
		}
		for _, s := range f.Blocks[b].succs() {
			if rpo[s] > rpo[b] {
				continue
			}
			if !dominates(s, b) {
				return fmt.Errorf("%s: irreducible loop (a jump back into a loop that does not enter through its header)", where(p, f.Blocks[b].Last))
			}
			l := byHeader[s]
			if l == nil {
				l = &Loop{Header: s, Body: map[int]bool{s: true}, Insn: f.Blocks[s].First}
				byHeader[s] = l
			}
			l.Latch = append(l.Latch, b)
			stack := []int{b}
			for len(stack) > 0 {
				x := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				if l.Body[x] {
					continue
				}
				l.Body[x] = true
				stack = append(stack, preds[x]...)
			}
		}
	}
	for _, l := range byHeader {
		f.Loops = append(f.Loops, l)
	}
	// Outer loops first: larger bodies contain smaller ones.
	sort.Slice(f.Loops, func(i, j int) bool {
		if len(f.Loops[i].Body) != len(f.Loops[j].Body) {
			return len(f.Loops[i].Body) > len(f.Loops[j].Body)
		}
		return f.Loops[i].Header < f.Loops[j].Header
	})
	f.loopOf = make([]*Loop, n)
	for _, l := range f.Loops {
		for b := range l.Body {
			f.loopOf[b] = l // inner loops come later and overwrite outer ones
		}
		// The parent is the smallest other loop that holds the header.
		for _, o := range f.Loops {
			if o != l && o.Body[l.Header] && len(o.Body) > len(l.Body) &&
				(l.Parent == nil || len(o.Body) < len(l.Parent.Body)) {
				l.Parent = o
			}
		}
	}
	return nil
}

// childOf returns the member of region r (nil for the function body) that
// holds block b: the outermost loop inside r containing b, or nil when b
// belongs to r directly.
func (f *Func) childOf(r *Loop, b int) *Loop {
	l := f.loopOf[b]
	if l == r {
		return nil
	}
	for l != nil && l.Parent != r {
		l = l.Parent
	}
	return l
}

// inRegion reports whether block b lies in region r (nil: whole function).
func inRegion(r *Loop, b int) bool { return r == nil || r.Body[b] }
