package program

import (
	"context"
	"fmt"

	"github.com/dpperf/dpperf/bpfprog"
	"github.com/dpperf/dpperf/cfg"
	"github.com/dpperf/dpperf/perfiface"
	"github.com/dpperf/dpperf/symex"
	"github.com/dpperf/dpperf/target"
)

// traceMean prices every packet of o.Trace with the program's performance
// interface under the target, as `dpperf interface --metric cost --trace`
// does, and returns the stage whose engines run the mean packet: the rate
// of all engines is the capacity of the target's first component over the
// mean cost.
func traceMean(ctx context.Context, object, name, tgt string, o Options) (Stage, error) {
	t, err := target.Load(tgt)
	if err != nil {
		return Stage{}, fmt.Errorf("target: %w", err)
	}
	prog, err := bpfprog.LoadFileWith(object, bpfprog.Options{Program: name})
	if err != nil {
		return Stage{}, fmt.Errorf("object: %w", err)
	}
	g, err := cfg.Build(prog, cfg.Options{})
	if err != nil {
		return Stage{}, fmt.Errorf("object: %w", err)
	}
	ex, err := perfiface.Explore(ctx, g, perfiface.ExploreOptions{Workers: max(o.Workers, 1), Check: symex.Options{Solver: o.solver()}})
	if err != nil {
		return Stage{}, fmt.Errorf("interface of %s: %w", object, err)
	}
	it, err := perfiface.Build(ex, perfiface.MetricCost, t, object+" ("+prog.Name+")")
	if err != nil {
		return Stage{}, fmt.Errorf("interface of %s: %w", object, err)
	}
	d, err := perfiface.NewDeployment(it, perfiface.DeployOptions{})
	if err != nil {
		return Stage{}, err
	}
	if err := d.Replay(ctx, o.Trace, nil); err != nil {
		return Stage{}, fmt.Errorf("trace %s: %w", o.Trace, err)
	}
	if len(d.Packets) == 0 {
		return Stage{}, fmt.Errorf("trace %s: no packet of it ran on a path of %s", o.Trace, prog.Name)
	}
	sum := 0.0
	for _, p := range d.Packets {
		sum += p.Cost
	}
	mean := sum / float64(len(d.Packets))
	c := t.Components[0]
	if !(mean > 0) {
		return Stage{}, fmt.Errorf("trace %s: mean cost %g %s", o.Trace, mean, c.Unit)
	}
	return Stage{Program: prog.Name, Target: t.Name, Basis: string(t.Basis), How: "trace mean",
		Rate: c.Capacity / mean, Bottleneck: c.Name, Packets: len(d.Packets)}, nil
}
