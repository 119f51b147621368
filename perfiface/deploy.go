package perfiface

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/dpperf/dpperf/bpfprog"
	"github.com/dpperf/dpperf/internal/fail"
	"github.com/dpperf/dpperf/interp"
	"github.com/dpperf/dpperf/mapstate"
	"github.com/dpperf/dpperf/replay"
	"github.com/dpperf/dpperf/replay/dist"
	"github.com/dpperf/dpperf/replay/rootcause"
)

// DeployOptions configure a deployment-specific interface.
type DeployOptions struct {
	// State is laid over the object's own map contents before the first
	// packet (nil: empty maps).
	State *mapstate.State
	// Resolution of the view whose leaves are the classes (0: exact).
	Resolution float64
	// Percentiles reported per class; default 50, 90, 99.
	Percentiles []float64
}

// Step is one test on the way from the root of a view to a class, with
// its outcome.
type Step struct {
	Test  string `json:"test"`
	Holds bool   `json:"holds"`
}

// Class is a leaf of the view with the packets of the trace that reached
// it.
type Class struct {
	ID    int    `json:"class"` // position among the view's leaves, from 0
	Leaf  *VNode `json:"-"`
	Route []Step `json:"route"`
	// Packets that reached the class, their costs in trace order and the
	// requested percentiles of those costs (empty with no packet).
	Packets     int       `json:"packets"`
	Costs       []float64 `json:"-"`
	Percentiles []float64 `json:"percentiles"`
}

// PacketCost is what one packet of the trace costs under the interface.
type PacketCost struct {
	Index int                // position in the capture
	Path  int                // index into Interface.Paths
	Class int                // index into Deployment.Classes
	Cost  float64            // the path's Value with the PCVs the packet met
	Insns int                // instructions the interpreter executed
	Vars  map[string]float64 // the PCVs the packet met, named as in formulas
}

// Deployment is the interface specialised to a workload: every packet of
// a trace replayed, priced and sorted into the classes of a view.
type Deployment struct {
	It    *Interface
	View  *View
	Trace string
	// Frames read; NotRun: frames the program could not receive (runts,
	// oversized) or whose run failed; OffPath: runs whose path is not a
	// feasible path of the exploration (a truncated exploration, a path
	// the solver wrongly refuted) — counted, never priced.
	Frames, NotRun, OffPath int
	// InsnMismatch counts packets whose path's instruction count differs
	// from the interpreter's count (0 unless the graph is wrong).
	InsnMismatch int
	Want         []float64    // the per-class percentiles
	Classes      []*Class     // the view's leaves, in the order Python prints them
	Packets      []PacketCost // the priced packets, in trace order
	All          []float64    // p0..p100 of all priced packets
	Root         *VNode       // the view without classes no packet reached
	classOf      map[*VNode]int
	pathClass    []int
	unmatched    []int // indices of the first off-path packets, for messages
}

// NewDeployment prepares the classes of it's view at opts.Resolution
// for a trace; Replay then fills them.
func NewDeployment(it *Interface, opts DeployOptions) (*Deployment, error) {
	if it.g == nil || it.Root == nil {
		return nil, errors.New("deployment interface: the exploration has no decision tree (stopped early?)")
	}
	want := opts.Percentiles
	if len(want) == 0 {
		want = []float64{50, 90, 99}
	}
	for _, p := range want {
		if !(p >= 0 && p <= 100) {
			return nil, fmt.Errorf("percentile %g outside 0..100", p)
		}
	}
	d := &Deployment{It: it, View: it.View(max(opts.Resolution, 1e-9)), Want: want,
		classOf: map[*VNode]int{}, pathClass: make([]int, len(it.Paths))}
	eachClass(d.View.Root, func(v *VNode, route []Step) {
		c := &Class{ID: len(d.Classes), Leaf: v, Route: route}
		d.classOf[v] = c.ID
		for _, p := range v.Paths {
			d.pathClass[p] = c.ID
		}
		d.Classes = append(d.Classes, c)
	})
	return d, nil
}

// Prog is the program the interface describes.
func (d *Deployment) Prog() *bpfprog.Program { return d.It.prog }

// ReplayOptions are the options that replay the program on the graph the
// interface's paths index, from state.
func (d *Deployment) ReplayOptions(state *mapstate.State) replay.Options {
	return replay.Options{State: state, Graph: d.It.g}
}

// Price maps a replayed packet to its path and class and evaluates its
// cost. ok is false when the packet did not run or its path is not one
// of the interface's.
func (d *Deployment) Price(pkt *replay.Packet) (pc PacketCost, ok bool) {
	if pkt.Result == nil || pkt.Err != nil {
		return pc, false
	}
	p, found := d.It.Locate(pkt.Edges)
	if !found {
		return pc, false
	}
	vars := PCVValues(pkt.Result)
	return PacketCost{Index: pkt.Index, Path: p, Class: d.pathClass[p], Insns: pkt.Result.Count,
		Cost: math.Round(d.It.runValue(p, pkt.Edges).Eval(vars)*1e6) / 1e6, Vars: vars}, true
}

// PCVValues sums the PCVs of a run's map operations per map and PCV name,
// named as formulas name them ("traversals_flows").
func PCVValues(res *interp.Result) map[string]float64 {
	vars := map[string]float64{}
	for _, c := range res.Calls {
		if c.Map == "" {
			continue
		}
		for _, v := range c.PCV {
			vars[pcvVar(v.Name, c.Map)] += float64(v.Value)
		}
	}
	return vars
}

// Replay runs every packet of the capture at path through the program
// (replay.File on the interface's graph, from state) and prices it; then
// it computes the percentiles and the pruned tree.
func (d *Deployment) Replay(ctx context.Context, path string, state *mapstate.State) error {
	d.Trace = path
	sum, err := replay.File(ctx, d.Prog(), path, d.ReplayOptions(state), func(pkt *replay.Packet) error {
		d.Add(pkt)
		return nil
	})
	if err != nil {
		return err
	}
	d.Frames = sum.Packets
	return d.Finish()
}

// Add prices one replayed packet and files it under its class.
func (d *Deployment) Add(pkt *replay.Packet) {
	pc, ok := d.Price(pkt)
	switch {
	case pkt.Result == nil:
		d.NotRun++
		return
	case !ok:
		d.OffPath++
		if len(d.unmatched) < 5 {
			d.unmatched = append(d.unmatched, pkt.Index)
		}
		return
	}
	if p := d.It.Paths[pc.Path]; !p.Bounded && p.Insns != pc.Insns {
		d.InsnMismatch++
	}
	d.Packets = append(d.Packets, pc)
	c := d.Classes[pc.Class]
	c.Packets++
	c.Costs = append(c.Costs, pc.Cost)
}

// Finish computes the percentiles of every class and of all packets and
// drops the classes no packet reached from the tree.
func (d *Deployment) Finish() error {
	if len(d.Packets) == 0 {
		return fail.Inputf(d.Trace, "no packet ran on a feasible path (%d frames, %d did not run, %d off the explored paths)",
			d.Frames, d.NotRun, d.OffPath)
	}
	costs := make([]float64, len(d.Packets))
	for i, p := range d.Packets {
		costs[i] = p.Cost
	}
	var err error
	if d.All, err = dist.Percentiles(costs); err != nil {
		return err
	}
	for _, c := range d.Classes {
		c.Percentiles = c.Percentiles[:0]
		for _, p := range d.Want {
			if c.Packets == 0 {
				break
			}
			v, err := dist.Percentile(c.Costs, p)
			if err != nil {
				return err
			}
			c.Percentiles = append(c.Percentiles, v)
		}
	}
	d.Root = d.prune(d.View.Root)
	return nil
}

// Unmatched returns the capture indices of the first packets (at most 5)
// whose path is not one of the interface's.
func (d *Deployment) Unmatched() []int { return d.unmatched }

// prune drops the classes no packet reached; a test left with one side
// becomes that side.
func (d *Deployment) prune(v *VNode) *VNode {
	if v == nil {
		return nil
	}
	if v.leaf() {
		if d.Classes[d.classOf[v]].Packets == 0 {
			return nil
		}
		return v
	}
	t, e := d.prune(v.Then), d.prune(v.Else)
	switch {
	case t == nil:
		return e
	case e == nil:
		return t
	}
	n := *v
	n.Then, n.Else = t, e
	return &n
}

// ClassOf returns the class of a leaf of the pruned tree.
func (d *Deployment) ClassOf(leaf *VNode) *Class { return d.Classes[d.classOf[leaf]] }

// RootCause ranks the view's tests (with their outcome on each packet's
// way to its class) and the PCVs by how well they separate the slow
// packets from the others. A condition is named by its test when it held
// and "not (test)" when it did not.
func (d *Deployment) RootCause(slow rootcause.Slow) (*rootcause.Table, error) {
	samples := make([]rootcause.Sample, len(d.Packets))
	for i, p := range d.Packets {
		bools := map[string]bool{}
		for _, s := range d.Classes[p.Class].Route {
			bools[StepName(s)] = true
		}
		samples[i] = rootcause.Sample{Cost: p.Cost, Bools: bools, Nums: p.Vars}
	}
	return rootcause.Rank(samples, slow)
}

// StepName names a test with its outcome.
func StepName(s Step) string {
	if s.Holds {
		return s.Test
	}
	if inner, ok := stripNot(s.Test); ok {
		return inner
	}
	return "not (" + s.Test + ")"
}
