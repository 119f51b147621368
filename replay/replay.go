package replay

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/dpperf/dpperf/bpfprog"
	"github.com/dpperf/dpperf/cfg"
	"github.com/dpperf/dpperf/internal/fail"
	"github.com/dpperf/dpperf/interp"
	"github.com/dpperf/dpperf/mapstate"
)

// Options set up a replay. The zero value replays from the object's own
// map contents with the interpreter's defaults.
type Options struct {
	// State is laid over the object's initial map contents (global data)
	// before the first packet.
	State *mapstate.State
	// Interp and Maps configure the interpreter; Maps.Flags defaults to
	// the object's map flags.
	Interp interp.Options
	Maps   interp.MapOptions
	// Graph, when set, maps each run onto its edges (Packet.Edges); it
	// must be cfg.Build's graph of the program replayed.
	Graph *cfg.Graph
	// SnapshotBefore, when set, is asked for each packet index whether to
	// record the map state the packet meets (Packet.Before). A snapshot
	// costs a copy of every map.
	SnapshotBefore func(index int) bool
	// Progress, when set, is called every ProgressEvery packets (default
	// 10000) and once at the end.
	Progress      func(Progress)
	ProgressEvery int
}

// Progress reports how far a replay got.
type Progress struct {
	Packets int           // frames read
	Elapsed time.Duration // since the replay started
}

// Packet is one frame and what the program did with it.
type Packet struct {
	Index   int // position in the capture, from 0
	Time    time.Time
	WireLen int
	Data    []byte // the captured bytes, which the program received
	// Result is the interpreter's run; nil when the packet could not run
	// (Err says why).
	Result *interp.Result
	// Edges is the graph path of the run (indices into Graph.Edges), when
	// Options.Graph is set.
	Edges []int32
	// Before is the map state the packet met, when SnapshotBefore asked.
	Before *mapstate.State
	// Err is why the packet did not run (a runt below the Ethernet
	// header, a frame over the XDP limit, an interpreter error) or why
	// its path did not map onto the graph.
	Err error
}

// Summary is what a whole replay did.
type Summary struct {
	Packets int // frames read
	Ran     int // frames the interpreter ran
	Failed  int // frames with Err set
	Elapsed time.Duration
	// Maps is the map state after the last packet.
	Maps *interp.Maps
}

// Replayer runs frames through one program on persistent maps.
type Replayer struct {
	opts  Options
	path  *cfg.Pather
	it    *interp.Interp
	maps  *interp.Maps
	index int
}

// New sets up the interpreter and the starting maps for p.
func New(p *bpfprog.Program, opts Options) (*Replayer, error) {
	maps, err := interp.ObjectMaps(p, opts.State, opts.Maps)
	if err != nil {
		return nil, err
	}
	it, err := interp.New(p, opts.Interp)
	if err != nil {
		return nil, err
	}
	if opts.ProgressEvery <= 0 {
		opts.ProgressEvery = 10000
	}
	r := &Replayer{opts: opts, it: it, maps: maps}
	if opts.Graph != nil {
		r.path = cfg.NewPather(opts.Graph)
	}
	return r, nil
}

// Maps is the current map state (after the last packet run).
func (r *Replayer) Maps() *interp.Maps { return r.maps }

// Step runs one frame and returns what it did.
func (r *Replayer) Step(f Frame) *Packet {
	pkt := &Packet{Index: r.index, Time: f.Time, WireLen: f.WireLen, Data: f.Data}
	r.index++
	if r.opts.SnapshotBefore != nil && r.opts.SnapshotBefore(pkt.Index) {
		pkt.Before = r.maps.State()
	}
	res, err := r.it.Run(interp.Input{Packet: f.Data}, r.maps)
	if err != nil {
		pkt.Err = err
		return pkt
	}
	pkt.Result = res
	if r.path != nil {
		if pkt.Edges, err = r.path.Path(res.Path); err != nil {
			pkt.Err = fmt.Errorf("map the run onto the graph: %w", err)
		}
	}
	return pkt
}

// Run replays every frame of rd, calling fn with each packet in capture
// order. It stops at the end of the capture, on a capture error, when fn
// returns an error, or when ctx is done; the summary covers the frames
// replayed so far.
func (r *Replayer) Run(ctx context.Context, rd *Reader, fn func(*Packet) error) (*Summary, error) {
	start := time.Now()
	s := &Summary{Maps: r.maps}
	report := func() {
		if r.opts.Progress != nil {
			r.opts.Progress(Progress{Packets: s.Packets, Elapsed: time.Since(start)})
		}
	}
	defer func() { s.Elapsed = time.Since(start) }()
	for {
		if s.Packets%64 == 0 {
			if err := ctx.Err(); err != nil {
				return s, err
			}
		}
		f, err := rd.Next()
		if errors.Is(err, io.EOF) {
			report()
			return s, nil
		}
		if err != nil {
			return s, err
		}
		pkt := r.Step(f)
		s.Packets++
		if pkt.Result != nil {
			s.Ran++
		}
		if pkt.Err != nil {
			s.Failed++
		}
		if err := fn(pkt); err != nil {
			return s, err
		}
		if s.Packets%r.opts.ProgressEvery == 0 {
			report()
		}
	}
}

// File replays the capture at path through p: New, NewReader and Run.
func File(ctx context.Context, p *bpfprog.Program, path string, opts Options, fn func(*Packet) error) (*Summary, error) {
	r, err := New(p, opts)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fail.Input(path, fmt.Errorf("open capture: %w", errors.Unwrap(err)))
	}
	defer f.Close()
	rd, err := NewReader(f, path)
	if err != nil {
		return nil, err
	}
	return r.Run(ctx, rd, fn)
}

// Verdict names an XDP action.
func Verdict(v uint32) string {
	names := [...]string{"ABORTED", "DROP", "PASS", "TX", "REDIRECT"}
	if int(v) < len(names) {
		return names[v]
	}
	return fmt.Sprintf("verdict %d", v)
}

// Signature describes a run by its verdict and its map operations in
// order, e.g. "PASS flows.lookup:miss flows.update classes.lookup:hit": a
// readable class name for runs (runs of one graph path share it; runs of
// different paths may too, when they differ only in parsing).
func Signature(res *interp.Result) string {
	var b strings.Builder
	b.WriteString(Verdict(res.Verdict))
	for _, c := range res.Calls {
		b.WriteByte(' ')
		if c.Map == "" {
			b.WriteString(c.Helper.String())
			continue
		}
		b.WriteString(c.Map + "." + c.Op)
		switch {
		case c.Op == "lookup" && c.Ret != 0:
			b.WriteString(":hit")
		case c.Op == "lookup":
			b.WriteString(":miss")
		case c.Ret < 0:
			b.WriteString(":fail")
		}
	}
	return b.String()
}
