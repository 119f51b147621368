package perfiface

import "slices"

// eachClass visits the leaves of a view in class order (then before
// else, from the root), with the route of tests that leads to each.
func eachClass(root *VNode, visit func(leaf *VNode, route []Step)) {
	var walk func(v *VNode, route []Step)
	walk = func(v *VNode, route []Step) {
		if v == nil {
			return
		}
		if v.leaf() {
			visit(v, slices.Clone(route))
			return
		}
		walk(v.Then, append(slices.Clip(route), Step{Test: v.Test, Holds: true}))
		walk(v.Else, append(slices.Clip(route), Step{Test: v.Test, Holds: false}))
	}
	walk(root, nil)
}
