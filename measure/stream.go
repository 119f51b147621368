package measure

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/dpperf/dpperf/bpfprog"
	"github.com/dpperf/dpperf/calibrate"
	"github.com/dpperf/dpperf/interp"
	"github.com/dpperf/dpperf/mapstate"
	"github.com/dpperf/dpperf/stats"
	"github.com/dpperf/dpperf/testrun"
)

// A stateful example (a new flow, which its repeats then find) is timed on
// a stream of new flows: the example with a 16-bit counter added to two of
// its bytes, each run meeting the state the runs before it left
// (testrun.Stream). The interpreter picks the bytes: those for which every
// run of the stream takes the example's path.
const (
	streamProbe = 16   // runs that screen an offset
	streamMin   = 64   // fewest runs a stream is timed with
	streamMax   = 4096 // most runs a stream takes
	streamTries = 4    // halvings when the kernel's maps end up short of the interpreter's
)

// streamPlan is a stream the interpreter vouches for.
type streamPlan struct {
	offset, runs int
	final        *mapstate.State // the maps after the stream's runs
}

// planStream finds the two bytes to count on: at each offset it runs the
// stream on the interpreter from state, and keeps the offset whose stream
// stays longest (up to limit runs) on the example's path, executed. ok is
// false when no offset keeps it for streamMin runs.
func planStream(p *bpfprog.Program, opts interp.Options, state *mapstate.State, in interp.Input, executed []int32, limit int) (plan streamPlan, ok bool, err error) {
	for off := 0; off+2 <= len(in.Packet); off++ {
		n, _, err := streamRuns(p, opts, state, in, executed, off, streamProbe, false)
		if err != nil {
			return plan, false, err
		}
		if n < streamProbe {
			continue
		}
		n, final, err := streamRuns(p, opts, state, in, executed, off, limit, true)
		if err != nil {
			return plan, false, err
		}
		if free := freeOf(p, state, final); n > free {
			// Past the free room a run evicts or fails to insert:
			// another outcome than the example's.
			if n, final, err = streamRuns(p, opts, state, in, executed, off, free, true); err != nil {
				return plan, false, err
			}
		}
		if n >= streamMin && n > plan.runs {
			plan = streamPlan{offset: off, runs: n, final: final}
			if n == limit {
				break
			}
		}
	}
	return plan, plan.runs > 0, nil
}

// streamRuns runs the stream counting at off on the interpreter from
// state, up to limit runs, and returns how many took the executed path in
// a row from the first. With final it also returns the maps those runs
// left.
func streamRuns(p *bpfprog.Program, opts interp.Options, state *mapstate.State, in interp.Input, executed []int32, off, limit int, final bool) (int, *mapstate.State, error) {
	it, err := interp.New(p, opts)
	if err != nil {
		return 0, nil, err
	}
	maps, err := interp.NewMaps(p, state, interp.MapOptions{})
	if err != nil {
		return 0, nil, err
	}
	orig := binary.BigEndian.Uint16(in.Packet[off:])
	for k := range limit {
		step := in
		step.Packet = slices.Clone(in.Packet)
		binary.BigEndian.PutUint16(step.Packet[off:], orig+uint16(k))
		res, err := it.Run(step, maps)
		if err != nil {
			return 0, nil, err
		}
		if !slices.Equal(res.Path, executed) {
			if !final || k == 0 {
				return k, nil, nil
			}
			// The maps hold this run's changes too: run the stream again
			// up to where it left the path.
			return streamRuns(p, opts, state, in, executed, off, k, true)
		}
	}
	if !final {
		return limit, nil, nil
	}
	return limit, maps.State(), nil
}

// denseLimit is the largest array denseArrays fills.
const denseLimit = 1 << 16

// denseArrays is state with every array map that holds exactly one entry
// (not read-only) holding that entry's value at every index, or nil when
// no array qualifies. A solver's example fills only the slots its packet
// reads: a flow's slot of a consistent-hashing ring, its backend. The
// packets of a stream hash to other slots, which a deployment fills and
// the example left empty; with every slot like the example's they can
// take the example's path, which the interpreter then checks run by run.
func denseArrays(p *bpfprog.Program, state *mapstate.State) *mapstate.State {
	var out *mapstate.State
	for name, m := range state.Maps {
		pm := p.Maps[name]
		if pm == nil || !mapstate.IsArray(pm.Type) || len(m.Entries) != 1 || pm.MaxEntries > denseLimit || pm.Flags&unix.BPF_F_RDONLY_PROG != 0 {
			continue
		}
		if out == nil {
			out = state.Clone()
		}
		e := m.Entries[0]
		full := &mapstate.Map{Entries: make([]mapstate.Entry, pm.MaxEntries)}
		for i := range full.Entries {
			full.Entries[i] = mapstate.Entry{Key: binary.LittleEndian.AppendUint32(nil, uint32(i)), Value: e.Value, Values: e.Values}
		}
		out.Maps[name] = full
	}
	return out
}

// freeOf is the room the maps that grew from before to after had in
// before: the fewest entries one of them could still take. An LRU hash
// with per-CPU lists (BPF_F_NO_COMMON_LRU) gives each CPU an equal share
// of its entries, and the stream runs on one.
func freeOf(p *bpfprog.Program, before, after *mapstate.State) int {
	free := math.MaxInt
	ncpu, err := ebpf.PossibleCPU()
	if err != nil {
		ncpu = 1
	}
	for name, m := range after.Maps {
		pm := p.Maps[name]
		if pm == nil || mapstate.IsArray(pm.Type) {
			continue
		}
		had := 0
		if b := before.Maps[name]; b != nil {
			had = len(b.Entries)
		}
		if len(m.Entries) <= had {
			continue
		}
		room := int(pm.MaxEntries)
		if (pm.Type == ebpf.LRUHash || pm.Type == ebpf.LRUCPUHash) && pm.Flags&unix.BPF_F_NO_COMMON_LRU != 0 {
			room /= ncpu
		}
		free = min(free, room-had)
	}
	return free
}

// timeStream times the example on the stream of plan (Timings timings,
// each from state; the speed probe around each) and checks that the
// kernel's maps end up holding as many entries as the interpreter's: a
// kernel that evicts or refuses where the interpreter inserted (an LRU's
// per-CPU free lists run dry before the map is full) ran another
// outcome, and the stream is shortened until they agree. It returns the
// median time, the median carried to the slow state, and the runs timed.
func timeStream(probe *calibrate.Probe, r *testrun.Runner, p *bpfprog.Program, opts interp.Options, state *mapstate.State, in testrun.Input, executed []int32, plan streamPlan, verdict uint32) (ns, slow float64, runs int, err error) {
	st, err := r.Stream(in.Packet, plan.offset)
	if err != nil {
		return 0, 0, 0, err
	}
	defer st.Close()
	for range streamTries {
		var all, slows []float64
		for range Timings {
			if err := r.Fill(state); err != nil {
				return 0, 0, 0, err
			}
			var got uint32
			t, factor, err := probe.Around(replayCPU, func() (float64, error) {
				var err error
				var ns float64
				ns, got, err = st.Time(plan.runs)
				return ns, err
			})
			if err != nil {
				return 0, 0, 0, err
			}
			if got != verdict {
				return 0, 0, 0, fmt.Errorf("stream of %s: verdict %d, the example's %d", p.Name, got, verdict)
			}
			all, slows = append(all, t), append(slows, t*factor)
		}
		fewer, err := short(r, p, plan.final)
		if err != nil {
			return 0, 0, 0, err
		}
		if !fewer {
			slices.Sort(all)
			slices.Sort(slows)
			return stats.Percentile(all, 50), stats.Percentile(slows, 50), plan.runs, nil
		}
		if plan.runs/2 < streamMin {
			return 0, 0, 0, nil
		}
		n, final, err := streamRuns(p, opts, state, interpInput(in), executed, plan.offset, plan.runs/2, true)
		if err != nil {
			return 0, 0, 0, err
		}
		plan.runs, plan.final = n, final
	}
	return 0, 0, 0, nil
}

// short says whether a hash-like map holds fewer entries in the kernel
// than in want.
func short(r *testrun.Runner, p *bpfprog.Program, want *mapstate.State) (bool, error) {
	for name, m := range want.Maps {
		pm := p.Maps[name]
		if pm == nil || mapstate.IsArray(pm.Type) || !mapstate.Fillable(pm.Type) {
			continue
		}
		keys, err := r.Keys(name)
		if err != nil {
			return false, err
		}
		if len(keys) < len(m.Entries) {
			return true, nil
		}
	}
	return false, nil
}
