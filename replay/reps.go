package replay

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/dpperf/dpperf/bpfprog"
	"github.com/dpperf/dpperf/interp"
	"github.com/dpperf/dpperf/mapstate"
)

// Rep is a representative packet of a class with the map state it met,
// ready to be run again (in the kernel, or in the interpreter) as the
// trace ran it.
type Rep struct {
	Class  string
	Index  int // position in the capture
	Packet []byte
	State  *mapstate.State // the program's maps just before the packet
	Result *interp.Result  // the interpreter's run of it
}

// Representatives replays the capture at path twice. The first pass
// classifies every packet that ran with classOf and draws up to perClass
// packets of each class by reservoir sampling (seeded, so the draw is
// reproducible and spread over the whole trace, not only its start); the
// second pass, which replays identically, records the map state each
// drawn packet meets. Memory is O(classes · perClass) plus the snapshots.
// Reps come ordered by class (first appearance) and index.
func Representatives(ctx context.Context, p *bpfprog.Program, path string, opts Options, perClass int,
	classOf func(*Packet) string) ([]Rep, error) {
	if perClass <= 0 {
		return nil, fmt.Errorf("representatives: %d per class", perClass)
	}
	type reservoir struct {
		seen  int
		picks []int
	}
	classes := map[string]*reservoir{}
	var order []string
	rng := rand.New(rand.NewPCG(uint64(perClass), 0xc1a55))
	first := opts
	first.SnapshotBefore = nil
	_, err := File(ctx, p, path, first, func(pkt *Packet) error {
		if pkt.Result == nil {
			return nil
		}
		c := classOf(pkt)
		r := classes[c]
		if r == nil {
			r = &reservoir{}
			classes[c] = r
			order = append(order, c)
		}
		r.seen++
		switch {
		case len(r.picks) < perClass:
			r.picks = append(r.picks, pkt.Index)
		default:
			if j := rng.IntN(r.seen); j < perClass {
				r.picks[j] = pkt.Index
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	want := map[int]string{}
	for c, r := range classes {
		for _, i := range r.picks {
			want[i] = c
		}
	}
	second := opts
	second.SnapshotBefore = func(i int) bool { _, ok := want[i]; return ok }
	var reps []Rep
	_, err = File(ctx, p, path, second, func(pkt *Packet) error {
		c, ok := want[pkt.Index]
		if !ok {
			return nil
		}
		if pkt.Result == nil || classOf(pkt) != c {
			return fmt.Errorf("representatives: packet %d changed class on the second replay (the program read the clock or the random generator?)", pkt.Index)
		}
		reps = append(reps, Rep{Class: c, Index: pkt.Index, Packet: pkt.Data, State: pkt.Before, Result: pkt.Result})
		return nil
	})
	if err != nil {
		return nil, err
	}
	rank := map[string]int{}
	for i, c := range order {
		rank[c] = i
	}
	slices.SortFunc(reps, func(a, b Rep) int {
		if d := rank[a.Class] - rank[b.Class]; d != 0 {
			return d
		}
		return a.Index - b.Index
	})
	return reps, nil
}
