package classtime

import (
	"fmt"
	"strings"

	"github.com/dpperf/dpperf/mapstate"
	"github.com/dpperf/dpperf/testrun"
)

// restorers put each sample's state in place before its timed run: a
// refill of every map, or with Options.Warm the sample's Undo after each
// run (a refill only when another sample ran in between).
type restorers struct {
	m       *Meter
	samples []Sample
	undo    []*testrun.Undo
	states  []*mapstate.State // each sample's state as the kernel holds it
	current int               // the sample whose state the maps hold, or -1
}

func (m *Meter) restorers(samples []Sample) *restorers {
	return &restorers{m: m, samples: samples, undo: make([]*testrun.Undo, len(samples)),
		states: make([]*mapstate.State, len(samples)), current: -1}
}

// before leaves the maps in sample i's state.
func (rs *restorers) before(i int) error {
	run := rs.m.run
	if !rs.m.opts.Warm {
		return run.Fill(rs.samples[i].State)
	}
	if rs.current == i {
		return nil
	}
	if err := run.Fill(rs.samples[i].State); err != nil {
		return err
	}
	rs.current = i
	if rs.undo[i] != nil {
		return nil
	}
	// The first time: one untimed run tells what the runs change.
	s := rs.samples[i]
	state, err := run.State()
	if err != nil {
		return err
	}
	if _, err := run.Run(testrun.Input{Packet: s.Packet, Ifindex: s.Ifindex, RxQueue: s.RxQueue}); err != nil {
		return err
	}
	if rs.undo[i], err = run.UndoTo(state); err != nil {
		return err
	}
	rs.states[i] = state
	return rs.after(i)
}

// after puts sample i's state back after its run.
func (rs *restorers) after(i int) error {
	if !rs.m.opts.Warm {
		return nil
	}
	return rs.m.run.Apply(rs.undo[i])
}

// check makes sure, with Warm, that the last sample's undo still restores
// its state: a run that changed other entries than the first one did
// would have left the later runs a state of its own.
func (rs *restorers) check() error {
	if !rs.m.opts.Warm || rs.current < 0 {
		return nil
	}
	now, err := rs.m.run.State()
	if err != nil {
		return err
	}
	if d := mapstate.Diff(rs.m.prog, rs.states[rs.current], now); len(d) > 0 {
		return fmt.Errorf("sample %d: a run changed the maps otherwise than the first run, so undoing that one's changes left another state (%s)",
			rs.current, strings.Join(d[:min(len(d), 3)], "; "))
	}
	return nil
}
