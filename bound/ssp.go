package bound

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"time"

	"github.com/dpperf/dpperf/cfg"
	"github.com/dpperf/dpperf/internal/fail"
	"github.com/dpperf/dpperf/pathenum"
	"github.com/dpperf/dpperf/smt"
	"github.com/dpperf/dpperf/symex"
)

// SearchOptions configure the search for the slowest satisfiable path.
type SearchOptions struct {
	Metric    Metric
	Solver    smt.Config    // the solver command and its per-query timeout
	Workers   int           // solver processes checking paths in parallel; 0: one per CPU
	TimeLimit time.Duration // end the search with the best bound so far; 0: none
	// MaxChecks ends the search after this many paths were sent to the
	// checkers, with the best bound so far; 0: none. Unlike TimeLimit it
	// gives the same result on every machine (with one worker).
	MaxChecks int
	// MaxHeap ends the search, as MaxChecks does, once the heap holds this
	// many bytes (memcap.go); 0: no limit.
	MaxHeap int64
	// Tolerance ends the search once no unchecked path can lower the
	// metric by more than this fraction of the slowest satisfiable path
	// found (every unchecked path reaches at least best·(1−Tolerance)):
	// the bound is then that of the unchecked paths, an intermediate one
	// at most Tolerance below the exact bound; 0: exact.
	Tolerance float64
	MaxPacket int // largest packet, bytes; 0: symex.DefaultMaxPacket
	// WellFormed leaves out packets whose headers a host's stack would
	// reject (symex.Options.WellFormed); the bound can only rise.
	WellFormed bool
	// NoPrefixes and NoLemmas switch off two of the search's prunings, to
	// test that they change nothing but its speed: the refuted prefixes
	// pruned from the enumeration (every path is then checked on its own)
	// and the lemmas (unsat cores) one path teaches the others.
	NoPrefixes, NoLemmas bool
	// NoFamilies switches off a third: the families of paths (every path
	// that takes a lemma's edges) proven impossible and left out of the
	// enumeration (symex.Checker.Family, pathenum.Avoid).
	NoFamilies bool
	// Progress, when set, receives every improvement of the bound and the
	// final state, from the goroutine that called SSP.
	Progress func(Progress)
}

// Progress is the state of a search.
type Progress struct {
	Elapsed time.Duration
	Checked int     // paths decided
	Refuted int     // of which impossible
	Bound   float64 // a valid lower bound on the metric over all packets
	Final   bool    // the search ended
	SSP     bool    // Bound is the slowest satisfiable path's (tight), not intermediate
}

type job struct {
	rank int
	path Path
	// below, when positive, is the packet length (bytes) under which the
	// path would lower the best bit rate found so far: a satisfiable path
	// is asked once whether it runs with a shorter packet, and when it
	// cannot, it is decided without an example (whose smallest packet
	// takes a binary search of about ten checks).
	below int
}

type verdict struct {
	rank    int
	out     symex.Outcome
	example *symex.Example
	larger  bool // satisfiable only with packets of at least job.below bytes
	family  bool // impossible: it takes a family proven impossible (decided without a worker)
	err     error
}

// SSP searches the slowest satisfiable path: it enumerates paths
// slowest-first by the metric, asks the solver whether each can run,
// prunes refuted prefixes from the enumeration, and stops at the first
// satisfiable path once no path still to check could be slower than its
// exact value (the refinement of over-estimated costs and under-estimated
// packet sizes). Every refuted path raises the bound, which stays valid at
// any moment: a time limit or a cancelled ctx ends the search with the
// best bound so far, reported as intermediate.
func SSP(ctx context.Context, c *Costed, opts SearchOptions) (*Result, error) {
	start := time.Now()
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.NumCPU()
	}
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	limit := sctx
	if opts.TimeLimit > 0 {
		var stop context.CancelFunc
		limit, stop = context.WithTimeout(sctx, opts.TimeLimit)
		defer stop()
	}

	prune := pathenum.NewPrefixSet()
	ord, err := NewOrderedBy(c, opts.Metric, prune)
	if err != nil {
		return nil, err
	}
	jobs := make(chan job)
	verdicts := make(chan verdict, workers)
	checkers := make([]*symex.Checker, workers)
	lemmas := &symex.Lemmas{}
	shared := lemmas
	if opts.NoLemmas {
		shared = nil
	}
	for i := range checkers {
		checkers[i], err = symex.NewChecker(c.G, symex.Options{Solver: opts.Solver, MinPacket: c.T.MinPacket, MaxPacket: opts.MaxPacket, Lemmas: shared, WellFormed: opts.WellFormed, Families: !opts.NoFamilies})
		if err != nil {
			for _, ch := range checkers[:i] {
				ch.Close()
			}
			return nil, err
		}
	}
	// Every worker closes its checker (and kills its solvers) before the
	// search returns: a solver left running past the process would keep
	// a core busy, under a replay that follows (--measure) too.
	var closed sync.WaitGroup
	for _, ch := range checkers {
		closed.Add(1)
		go func() {
			defer closed.Done()
			defer ch.Close()
			for j := range jobs {
				v := verdict{rank: j.rank}
				if err := fail.Guard(func() error { check(limit, ch, j, &v); return nil }); err != nil {
					v.err = err // a defect, reported without a stack trace
				}
				verdicts <- v
			}
		}()
	}

	r := newResult(c)
	r.Packets = packetsOf(opts.WellFormed)
	opts.Workers = workers
	s := &search{c: c, opts: opts, ord: ord, prune: prune, start: start, best: math.Inf(1), paths: map[int]Path{}, done: map[int]verdict{},
		lemmas: shared, kept: map[string]bool{}}
	err = s.run(limit, jobs, verdicts, workers)
	close(jobs)
	// The search is decided: paths still being checked (an example
	// being solved) can change nothing.
	cancel()
	for range s.inflight {
		<-verdicts
	}
	closed.Wait()
	notes := map[string]bool{}
	for _, ch := range checkers {
		for _, n := range ch.Notes() {
			notes[n] = true
		}
		s.stats.Solver += ch.Checks
		s.stats.Folded += ch.Folded
		s.stats.ByLemma += ch.ByLemma
		s.stats.ByFamily += ch.ByFamily
		s.stats.Twins += ch.Twins
		s.stats.Uninverted += ch.Uninverted
	}
	s.stats.Lemmas = lemmas.Len()
	s.stats.Families = len(lemmas.Families())
	if err != nil {
		return nil, err
	}
	if s.heapStop {
		notes[s.heapNote()] = true
	}
	if s.tolerated() {
		notes[fmt.Sprintf("the search ended within its tolerance of %g%%: no unchecked path is slower than the bound, which lies at most that far below the slowest satisfiable path found", 100*s.opts.Tolerance)] = true
	}
	s.finish(r, notes)
	return r, nil
}

// search is the state of one SSP search.
type search struct {
	c        *Costed
	opts     SearchOptions
	ord      *Ordered
	prune    *pathenum.PrefixSet
	start    time.Time
	next     int             // rank of the next path to dispatch
	low      int             // lowest rank not yet decided in order
	paths    map[int]Path    // dispatched, not yet decided in order
	done     map[int]verdict // decided out of order
	inflight int
	naive    *Path
	exhaust  bool
	best     float64 // exact metric of the best satisfiable path so far
	bestPath *Path
	bestEx   *symex.Example
	bestOut  smt.Result
	bound    float64
	final    bool
	stats    SearchInfo
	series   []Point
	// lemmas holds the families proven impossible; fams of them are left
	// out of the enumeration (none more once the product grew too large).
	lemmas  *symex.Lemmas
	fams    int
	famsOff bool
	// kept holds the paths dispatched and not refuted, which a restarted
	// enumeration produces again.
	kept map[string]bool
	// single marks the nodes from which one path leads to the sink.
	single []bool
	// heapTick counts heap checks; heapStop is set once MaxHeap is reached.
	heapTick int
	heapStop bool
}

func (s *search) run(ctx context.Context, jobs chan<- job, verdicts <-chan verdict, workers int) error {
	for {
		// Dispatch while a worker is free and the next path could still
		// beat the best satisfiable one.
		// Paths decided here without a worker wait in done for advance:
		// at most decidedBatch of them, so that they do not pile up.
		for s.inflight < workers && !s.exhaust && !s.capped() && ctx.Err() == nil && len(s.done) < decidedBatch {
			key, ok := s.ord.Peek()
			if !ok || !s.worth(key) {
				s.exhaust = !ok
				break
			}
			p, ok := s.ord.Next()
			if !ok {
				s.exhaust = true // the remaining heads were duplicates
				break
			}
			if s.naive == nil {
				s.naive = &p
			}
			if s.prune.Covers(p.Edges) {
				continue // refuted while it waited
			}
			if s.lemmas != nil && s.lemmas.Covering(p.Edges) > 0 {
				if s.famsOff {
					// The enumeration can no longer leave the families
					// out (the product grew too large): the path takes
					// one, so it is decided here, impossible, without a
					// worker or the solver.
					s.paths[s.next] = p
					s.done[s.next] = verdict{rank: s.next, out: symex.Outcome{Result: smt.Unsat, Prefix: len(p.Edges)}, family: true}
					s.next++
					continue
				}
				// A family proven since the enumeration last restarted
				// holds the path: restart it without the new families.
				if err := s.avoidFamilies(); err != nil {
					return err
				}
				if err := s.ord.Refresh(); err != nil {
					return err
				}
				continue
			}
			h := pathKey(p.Edges)
			if s.kept[h] {
				continue // dispatched before the enumeration restarted
			}
			s.kept[h] = true
			s.paths[s.next] = p
			if s.opts.Metric == PacketRate && s.bestPath != nil && s.exact(p, nil) >= s.best {
				// Its exact cost cannot lower the bound, whether it
				// can run or not: decided without a check.
				s.done[s.next] = verdict{rank: s.next, out: symex.Outcome{Result: smt.Sat, Prefix: len(p.Edges)}, larger: true}
				s.next++
				continue
			}
			jobs <- job{s.next, p, s.below(p)}
			s.next++
			s.inflight++
		}
		s.advance()
		if s.final {
			return nil
		}
		if s.inflight == 0 {
			if ctx.Err() != nil || s.exhaust || s.capped() || s.stopped() {
				return s.end(ctx)
			}
			continue
		}
		var v verdict
		select {
		case v = <-verdicts:
		case <-ctx.Done():
			v = <-verdicts
		}
		s.inflight--
		if v.err != nil {
			if ctx.Err() != nil {
				v.out.Result = smt.Unknown // cut short: decides nothing
				v.err = nil
				v.rank = -v.rank - 1
			} else {
				return v.err
			}
		}
		if v.rank < 0 {
			continue
		}
		if v.out.Result == smt.Unsat && !s.opts.NoPrefixes {
			p := s.paths[v.rank]
			if s.branches(p.Edges[v.out.Prefix-1]) {
				s.prune.Add(p.Edges[:v.out.Prefix])
				s.stats.Prefixes = s.prune.Len
			}
			// A prefix after which the path can only go on one way is
			// the whole path: it prunes no other (the enumeration
			// produces a path once, and again only after a restart,
			// when it is checked again), and the trie would grow by a
			// path.
			delete(s.kept, pathKey(p.Edges))
		}
		s.done[v.rank] = v
	}
}

// decidedBatch is how many decided paths the dispatcher holds before it
// takes them in (advance).
const decidedBatch = 1024

// avoidFamilies restarts the enumeration without the families proven
// impossible since it last did. It is called when the enumeration produced
// a path a new family holds, so that a stream of families (twins) costs a
// restart only where the enumeration meets them.
func (s *search) avoidFamilies() error {
	if s.lemmas == nil || s.famsOff {
		return nil
	}
	fams := s.lemmas.Families()
	n := len(fams)
	if n == s.fams {
		return nil
	}
	err := s.ord.Avoid(fams)
	if errors.Is(err, pathenum.ErrTooLarge) {
		s.famsOff = true
		return nil
	}
	s.fams = n
	return err
}

// branches reports whether some node after edge e (up to the sink) has
// more than one way on: whether a prefix ending with e starts more than
// one path.
func (s *search) branches(e int32) bool {
	if s.single == nil {
		g := s.c.G
		out := g.OutEdges()
		s.single = make([]bool, len(g.Nodes))
		for v := len(g.Nodes) - 1; v >= 0; v-- {
			s.single[v] = cfg.NodeID(v) == g.Sink || len(out[v]) == 1 && s.single[g.Edges[out[v][0]].To]
		}
	}
	return !s.single[s.c.G.Edges[e].To]
}

// pathKey identifies a path: its edges as bytes.
func pathKey(edges []int32) string {
	b := make([]byte, 0, 4*len(edges))
	for _, e := range edges {
		b = binary.LittleEndian.AppendUint32(b, uint32(e))
	}
	return string(b)
}

// advance takes decided paths in rank order, updating the best
// satisfiable path and the bound.
func (s *search) advance() {
	for {
		v, ok := s.done[s.low]
		if !ok {
			break
		}
		delete(s.done, s.low)
		p := s.paths[s.low]
		delete(s.paths, s.low)
		s.low++
		s.stats.Checked++
		switch v.out.Result {
		case smt.Unsat:
			s.stats.Refuted++
			if v.family {
				s.stats.ByFamily++
			}
		case smt.Unknown:
			s.stats.Unknown++
			s.consider(p, v, p.Key)
		case smt.Sat:
			if v.larger {
				s.stats.Larger++
				break
			}
			s.consider(p, v, s.exact(p, v.example))
		}
	}
	// The bound: every path below the lowest undecided one is decided.
	lowKey, ok := s.ord.Peek()
	if !ok {
		lowKey = math.Inf(1)
	}
	if p, ok := s.paths[s.low]; ok {
		lowKey = p.Key
	}
	bound := min(s.best, lowKey)
	if s.bestPath != nil && lowKey >= s.best {
		s.final = true
	}
	if bound > s.bound || s.final {
		s.bound = bound
		if !math.IsInf(bound, 1) {
			s.report(false)
		}
	}
}

// exact is the metric of a satisfiable path with its exact cost, its
// map lookups priced by the outcomes of its example ex (nil: by the
// dearest) and, for the bit rate, the smallest packet the solver found.
func (s *search) exact(p Path, ex *symex.Example) float64 {
	size := p.Size
	if ex != nil && len(ex.Packet) > size {
		size = len(ex.Packet)
	}
	cost, _ := s.c.OutcomeCost(p.Edges, lookupsOf(ex))
	return s.c.pathWith(cost, size, s.opts.Metric).Key
}

// below is the packet length under which p would lower the best bit rate
// found so far, for job.below; 0 when there is no best yet or the metric
// is the packet rate. At length n the path's exact rate gives
// rate·8·n bit/s, below the best when n < best/(8·rate).
func (s *search) below(p Path) int {
	if s.opts.Metric != BitRate || s.bestPath == nil || math.IsInf(s.best, 1) {
		return 0
	}
	rate := s.c.pathWith(s.c.ExactCost(p.Edges), p.Size, s.opts.Metric).Rate
	n := math.Ceil(s.best / (8 * rate))
	if math.IsInf(rate, 1) || n > 1<<16 {
		return 0
	}
	return max(int(n), 1)
}

func (s *search) consider(p Path, v verdict, value float64) {
	if value < s.best {
		s.best, s.bestEx, s.bestOut = value, v.example, v.out.Result
		q := p
		s.bestPath = &q
	}
}

func (s *search) report(final bool) {
	pr := Progress{Elapsed: time.Since(s.start), Checked: s.stats.Checked, Refuted: s.stats.Refuted,
		Bound: s.bound, Final: final, SSP: s.final}
	if len(s.series) < maxSeries {
		s.series = append(s.series, Point{Seconds: pr.Elapsed.Seconds(), Bound: pr.Bound, Checked: pr.Checked})
	} else {
		s.series[len(s.series)-1] = Point{Seconds: pr.Elapsed.Seconds(), Bound: pr.Bound, Checked: pr.Checked}
	}
	if s.opts.Progress != nil {
		s.opts.Progress(pr)
	}
}

const maxSeries = 1000

// end closes a search cut short (time limit, check limit, cancel) or
// exhausted.
func (s *search) end(ctx context.Context) error {
	if s.bestPath == nil && ctx.Err() == nil && !s.capped() {
		return fmt.Errorf("no path of the program can run: every one of the %d paths is contradictory", s.stats.Checked)
	}
	return nil
}
