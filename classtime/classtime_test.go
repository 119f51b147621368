package classtime

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dpperf/dpperf/bpfprog"
	"github.com/dpperf/dpperf/internal/bpftest"
	"github.com/dpperf/dpperf/internal/testobj"
	"github.com/dpperf/dpperf/mapstate"
	"github.com/dpperf/dpperf/replay"
	"github.com/dpperf/dpperf/testrun"
)

var mixedPcap = filepath.Join(testobj.Root(), "examples", "interface", "mixed.pcap")

// open loads a meter for flowtable and checks, at the end of the test,
// that it left none of its programs loaded.
func open(t testing.TB, runs int) (*Meter, *bpfprog.Program) {
	t.Helper()
	p, err := bpfprog.LoadFile(testobj.Built(t, "flowtable"), "")
	if err != nil {
		t.Fatal(err)
	}
	m, err := Open(p, Options{Runs: runs, Repeat: 200})
	if err != nil {
		t.Fatal(err)
	}
	ids := bpftest.IDs(t, m.Programs()...)
	t.Cleanup(func() {
		if err := m.Close(); err != nil {
			t.Error(err)
		}
		if left := bpftest.StillLoaded(ids); len(left) > 0 {
			t.Errorf("programs %v still loaded after Close", left)
		}
	})
	return m, p
}

// classOf names a packet by its map operations, verdict and instruction
// count.
func classOf(pkt *replay.Packet) string {
	return fmt.Sprintf("%s [%d insns]", replay.Signature(pkt.Result), pkt.Result.Count)
}

// TestMeasureFlowtable times the classes of the example trace: every
// class gets its runs, kernel verdicts match the interpreter's, the
// new-flow class is measured only by restoring (its repeats would hit),
// and the hit class also by repeats.
func TestMeasureFlowtable(t *testing.T) {
	m, p := open(t, 15)
	reps, err := replay.Representatives(context.Background(), p, mixedPcap, replay.Options{}, 2, classOf)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := m.Measure(context.Background(), FromReps(reps))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Overhead <= 0 {
		t.Errorf("overhead %v ns", rep.Overhead)
	}
	seenNew, seenHit := false, false
	for _, c := range rep.Classes {
		t.Logf("%-60s samples %d runs %d median %.0f ns (p10 %.0f, p90 %.0f) net %.0f repeat %.1f", c.Name, c.Samples, c.Runs, c.Median, c.P10, c.P90, c.Net, c.RepeatNs)
		if c.Runs != 15*c.Samples || !(c.Min > 0 && c.Min <= c.P10 && c.P10 <= c.Median && c.Median <= c.P90) {
			t.Errorf("class %s: %+v", c.Name, c)
		}
		switch {
		case strings.Contains(c.Name, "flows.update"):
			seenNew = true
			if c.Stable || !math.IsNaN(c.RepeatNs) {
				t.Errorf("class %s: stable under repeats, but the first run inserts the flow", c.Name)
			}
		case strings.HasPrefix(c.Name, "PASS flows.lookup:hit classes"):
			seenHit = true
			if !c.Stable || !(c.RepeatNs > 0) {
				t.Errorf("class %s: not measured by repeats", c.Name)
			}
		}
	}
	if !seenNew || !seenHit || len(rep.Classes) < 8 {
		t.Errorf("%d classes; new flow %v, hit %v", len(rep.Classes), seenNew, seenHit)
	}
}

// TestVerdictMismatch: a sample whose kernel verdict differs from the
// given one is an error naming the class.
func TestVerdictMismatch(t *testing.T) {
	m, p := open(t, 2)
	reps, err := replay.Representatives(context.Background(), p, mixedPcap, replay.Options{}, 1, classOf)
	if err != nil {
		t.Fatal(err)
	}
	s := FromReps(reps[:1])
	s[0].Verdict = 4
	if _, err := m.Measure(context.Background(), s); err == nil || !strings.Contains(err.Error(), s[0].Class) {
		t.Errorf("error %v, want a verdict mismatch naming the class", err)
	}
}

// TestWarmUndo: a run's undo puts back exactly the state it met (the
// new-flow packet's undo deletes the flow it inserted), and warm
// measurement of every class ends in the last sample's state.
func TestWarmUndo(t *testing.T) {
	m, p := open(t, 3)
	m.opts.Warm = true
	reps, err := replay.Representatives(context.Background(), p, mixedPcap, replay.Options{}, 1, classOf)
	if err != nil {
		t.Fatal(err)
	}
	samples := FromReps(reps)
	sawInsert := false
	for _, s := range samples {
		if err := m.run.Fill(s.State.Canonical(p)); err != nil {
			t.Fatal(err)
		}
		before, err := m.run.State()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := m.run.Run(testrun.Input{Packet: s.Packet}); err != nil {
			t.Fatal(err)
		}
		u, err := m.run.UndoTo(before)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(s.Class, "flows.update") {
			sawInsert = true
			if u.Len() == 0 {
				t.Errorf("class %s: the run inserted a flow but the undo is empty", s.Class)
			}
		}
		if err := m.run.Apply(u); err != nil {
			t.Fatal(err)
		}
		after, err := m.run.State()
		if err != nil {
			t.Fatal(err)
		}
		if d := mapstate.Diff(p, before, after); len(d) > 0 {
			t.Errorf("class %s: after the undo %v", s.Class, d)
		}
	}
	if !sawInsert {
		t.Error("no new-flow sample in the trace")
	}
	rep, err := m.Measure(context.Background(), samples)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range rep.Classes {
		if c.Runs != 3*c.Samples || !(c.Min > 0) {
			t.Errorf("class %s: %+v", c.Name, c)
		}
	}
}
