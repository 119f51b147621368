package perfiface

import (
	"fmt"
	"math"
	"strings"
)

// View is the interface at one resolution: a tree of tests over readable
// conditions whose leaves are classes of inputs with one formula each.
type View struct {
	Resolution float64
	Chosen     bool // the resolution was chosen by class count (Interface.Choose)
	Root       *VNode
}

// VNode is a node of a View.
type VNode struct {
	// Test node: Test holds, Then runs; else Else.
	Test     string `json:"test,omitempty"`
	Source   string `json:"source,omitempty"` // the branch in the source, when Test is not readable
	Readable bool   `json:"-"`
	Then     *VNode `json:"then,omitempty"`
	Else     *VNode `json:"else,omitempty"`
	// Leaf: the class's formula (the middle of its paths' range), the
	// range of the constants, and the paths.
	Value   *Formula `json:"value,omitempty"`
	Lo      float64  `json:"lo"`
	Hi      float64  `json:"hi"`
	Paths   []int    `json:"paths,omitempty"`
	Unknown bool     `json:"unknown,omitempty"` // every path of the class may be infeasible
	// Bounded counts the class's subtrees that were not explored (bounded
	// leaves, ExploreOptions.MaxDepth): Lo and Hi hold for them too.
	Bounded int `json:"bounded,omitempty"`

	s   *spread // of a leaf: its paths' formulas
	key int32   // of a test built by elimination: its constraint + 1 (0: none)
}

func (v *VNode) leaf() bool { return v.Value != nil }

// condText is a Cond rendered under the layout of its position.
type condText struct {
	text     string
	readable bool
	lay      layout
}

// text renders a condition below the layout l.
func (it *Interface) text(c *Cond, l layout) condText {
	if t, ok := it.texts[c]; ok {
		return t
	}
	t := condText{lay: l}
	if c.expr != nil {
		t.text = render(c.expr, l)
		t.readable = !rawName(t.text)
	} else {
		t.text = fmt.Sprintf("branch_at(%d)", c.Insn)
	}
	it.texts[c] = t
	return t
}

// View returns the interface at resolution r: every input's cost lies
// within r of the value of its class (resolution.go). It is the view of
// the sweep's last threshold below r whose view is used.
func (it *Interface) View(r float64) *View {
	v := &View{Resolution: r}
	if it.Root != nil {
		u := it.used(r)
		v.Root, _ = it.raw(math.Nextafter(u[len(u)-1].value, math.Inf(1)))
	}
	return v
}

// negated returns the one negation of a Cond, so that its rendering is
// cached across views.
func (it *Interface) negated(c, neg *Cond) *Cond {
	if n, ok := it.negs[c]; ok {
		return n
	}
	it.negs[c] = neg
	return neg
}

func (it *Interface) leaves(n *Node, out *[]int) {
	if n.Leaf() {
		*out = append(*out, n.Path)
		return
	}
	it.leaves(n.Then, out)
	it.leaves(n.Else, out)
}

// sameClass reports leaves that return the same formula.
func sameClass(a, b *VNode) bool {
	return a.leaf() && b.leaf() && a.Value.String() == b.Value.String()
}

// sameTree reports subtrees written alike: the same tests, and leaves
// that return the same formulas.
func sameTree(a, b *VNode) bool {
	switch {
	case a.leaf() || b.leaf():
		return sameClass(a, b)
	}
	return a.Test == b.Test && sameTree(a.Then, b.Then) && sameTree(a.Else, b.Else)
}

// mergedTree is one subtree made of two written alike, each leaf the
// merged class of the two.
func mergedTree(a, b *VNode) *VNode {
	if a.leaf() {
		return merged(a, b)
	}
	return &VNode{Test: a.Test, Readable: a.Readable, Source: a.Source,
		Then: mergedTree(a.Then, b.Then), Else: mergedTree(a.Else, b.Else)}
}

// coalesce joins tests that lead to the same class: "if A: x elif B: x"
// becomes "if A or B: x", and "if A: (if B: x else y) else y" becomes
// "if A and B: x else y". With deep set, x and y may be whole subtrees
// written alike (sameTree), such as the same parsing behind two VLAN
// tag types.
func coalesce(v *VNode, deep bool) *VNode {
	if v == nil || v.leaf() {
		return v
	}
	v.Then, v.Else = coalesce(v.Then, deep), coalesce(v.Else, deep)
	same, join2 := sameClass, merged
	if deep {
		same, join2 = sameTree, mergedTree
	}
	switch {
	case same(v.Then, v.Else):
		return join2(v.Then, v.Else)
	case (deep || v.Then.leaf()) && !v.Else.leaf() && same(v.Then, v.Else.Then):
		return &VNode{Test: join(v.Test, "or", v.Else.Test), Readable: v.Readable && v.Else.Readable,
			Source: v.Source, Then: join2(v.Then, v.Else.Then), Else: v.Else.Else}
	case (deep || v.Else.leaf()) && !v.Then.leaf() && same(v.Else, v.Then.Else):
		return &VNode{Test: join(v.Test, "and", v.Then.Test), Readable: v.Readable && v.Then.Readable,
			Source: v.Source, Then: v.Then.Then, Else: join2(v.Else, v.Then.Else)}
	}
	return v
}

func join(a, op, b string) string {
	wrap := func(s string) string {
		if strings.Contains(s, " or ") || (op == "or" && strings.Contains(s, " and ")) {
			return "(" + s + ")"
		}
		return s
	}
	return wrap(a) + " " + op + " " + wrap(b)
}

// andText joins the conditions on the way to a class with "and", each
// that holds an "or" in parentheses: Python's "and" binds tighter.
func andText(conds []string) string {
	parts := make([]string, len(conds))
	for i, c := range conds {
		parts[i] = c
		if len(conds) > 1 && strings.Contains(c, " or ") {
			parts[i] = "(" + c + ")"
		}
	}
	return strings.Join(parts, " and ")
}

// merged is one class made of two with the same formula.
func merged(a, b *VNode) *VNode {
	f := *a.Value
	var s *spread
	if a.s != nil && b.s != nil {
		s = a.s.join(b.s)
	}
	return &VNode{Value: &f, Lo: min(a.Lo, b.Lo), Hi: max(a.Hi, b.Hi),
		Paths: append(append([]int(nil), a.Paths...), b.Paths...), Unknown: a.Unknown && b.Unknown,
		Bounded: a.Bounded + b.Bounded, s: s}
}

// Classes is the number of classes (leaves) of the view.
func (v *View) Classes() int {
	n := 0
	var walk func(*VNode)
	walk = func(x *VNode) {
		if x == nil {
			return
		}
		if x.leaf() {
			n++
			return
		}
		walk(x.Then)
		walk(x.Else)
	}
	walk(v.Root)
	return n
}
