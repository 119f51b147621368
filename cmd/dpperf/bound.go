package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/dpperf/dpperf/bound"
	"github.com/dpperf/dpperf/calibrate"
	"github.com/dpperf/dpperf/cfg"
	"github.com/dpperf/dpperf/internal/atomicfile"
	"github.com/dpperf/dpperf/internal/cli"
	"github.com/dpperf/dpperf/internal/fail"
	"github.com/dpperf/dpperf/measure"
	"github.com/dpperf/dpperf/smt"
	"github.com/dpperf/dpperf/symex"
	"github.com/dpperf/dpperf/target"
	"github.com/dpperf/dpperf/units"
)

// loopBounds collects repeated --loop-bound LOC=N flags.
type loopBounds map[string]int

func (l loopBounds) String() string { return fmt.Sprint(map[string]int(l)) }

func (l loopBounds) Set(s string) error {
	loc, n, ok := strings.Cut(s, "=")
	v, err := strconv.Atoi(n)
	if !ok || loc == "" || err != nil || v < 0 {
		return fmt.Errorf("want LOC=N (e.g. prog.c:42=16 or insn:17=8), got %q", s)
	}
	l[loc] = v
	return nil
}

func runBound(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("bound", "bound [flags] OBJECT.o", stderr)
	progName, progType := addProgramFlags(fs)
	list := fs.Bool("list", false, "list the programs of the object (as 'dpperf programs') and stop")
	tgt := fs.String("target", hostTarget, "target `NAME` (see 'dpperf targets') or file; the default is this machine, calibrated on first use (root, about a minute)")
	paths := fs.Int("paths", 1, "print the `K` slowest paths")
	out := cli.AddOutput(fs, "bound/json.md")
	asJSON := &out.JSON
	require := fs.String("require", "", "exit 1 when the bound is below `RATE` (e.g. 10Mpps, 25Gbit/s)")
	unroll := fs.Int("unroll", 0, "bound loops whose trip count cannot be proven to `N` iterations")
	lb := loopBounds{}
	fs.Var(lb, "loop-bound", "bound one loop: `LOC=N`, LOC a header source line (prog.c:42) or insn:INDEX; repeatable")
	naive := fs.Bool("naive", false, "only the naive bound: the slowest path, possible or not (no solver)")
	metric := fs.String("metric", "pps", "what to guarantee: `pps` (packet rate) or bps (bit rate at each path's smallest packet)")
	timeLimit := fs.Duration("time-limit", 0, "end the search after `DURATION` with the best bound so far (reported as intermediate)")
	tolerance := fs.Float64("tolerance", 0, "end the search once no unchecked path can lower the bound by more than `PCT` percent of the slowest satisfiable path found (reported as intermediate, never above the exact bound; 0: exact)")
	maxChecks := fs.Int("max-checks", 0, "end the search after `N` paths checked with the best bound so far (reported as intermediate; the same on every machine with --workers 1)")
	stream := fs.Bool("stream", false, "write each improvement of the bound as a JSON line, then the result as a last line")
	workers := fs.Int("workers", 0, "solver processes checking paths in parallel (0: one per CPU)")
	solver := fs.String("solver", "z3 -in -smt2", "SMT-LIB2 solver `COMMAND` reading from stdin (e.g. \"cvc5 --lang smt2 --incremental\")")
	queryTimeout := fs.Duration("solver-timeout", 2*time.Second, "per-path solver `TIMEOUT`; a timeout counts the path as possible")
	maxPacket := fs.Int("max-packet", symex.DefaultMaxPacket, "largest packet in `BYTES` the program can receive (the default is the XDP maximum with 4 KiB pages)")
	wellFormed := fs.Bool("well-formed", false, "only packets with valid headers (IPv4 ihl >= 5, lengths consistent; see docs/bound.md): the worst case of well-formed traffic, at least the bound over any bytes")
	pcapOut := fs.String("pcap", "", "write the example packet of the slowest satisfiable path to `FILE` (pcap)")
	pprofOut := fs.String("pprof", "", "write the slowest path's cost by function, source line and instruction to `FILE` (pprof; go tool pprof -top -lines FILE)")
	mapsOut := fs.String("maps", "", "write the map contents the example packet needs to `FILE` (JSON)")
	pcvFlag := fs.String("pcv", "", "price every map operation with its PCVs at `NAME=N,...` (traversals, evicted, stages, bucket_len; the target's pcv costs)")
	memory := fs.Int("memory", 768, "limit on the heap in `MIB` MiB: the garbage collector works harder near it (GOMEMLIMIT overrides that), and the search ends there with an intermediate bound (0: none)")
	doMeasure := fs.Bool("measure", false, "replay the example packet with BPF_PROG_TEST_RUN (root): check its verdict and path, time it")
	pos, err := cli.Parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return cli.UsageError(fs, "want one object file, got %d arguments", len(pos))
	}
	if *list {
		return out.Write(stdout, func(w io.Writer) error { return listPrograms(pos[0], *asJSON, w) })
	}
	if *memory > 0 && os.Getenv("GOMEMLIMIT") == "" {
		// A long search keeps every refuted prefix: without a limit the
		// heap grows to twice what is live before a collection.
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(int64(*memory) << 20))
	}
	var m bound.Metric
	switch *metric {
	case "pps":
		m = bound.PacketRate
	case "bps":
		m = bound.BitRate
	default:
		return fail.Usagef("bound: --metric must be pps or bps, got %q", *metric)
	}
	if *naive && (*pcapOut != "" || *mapsOut != "" || *stream || m != bound.PacketRate || *wellFormed) {
		return fail.Usagef("bound: --naive takes no --pcap, --maps, --stream, --metric or --well-formed")
	}
	var reqRate float64
	var reqKind units.RateKind
	if *require != "" {
		if reqRate, reqKind, err = units.ParseRate(*require); err != nil {
			return fail.Usagef("bound: --require: %v", err)
		}
	}
	var pcv map[string]float64
	if *pcvFlag != "" {
		if pcv, err = bound.ParsePCV(*pcvFlag); err != nil {
			return fail.Usagef("bound: %v", err)
		}
	}
	if *doMeasure && *naive {
		return cli.UsageError(fs, "--measure needs the search (no --naive)")
	}
	// The program before the target: a bad object is reported at once,
	// not after a first-use calibration of this machine.
	prog, err := loadPacketProgram(pos[0], "bound", progName, progType)
	if err != nil {
		return err
	}
	// The time limit holds for the whole run: graph, search and example.
	bctx, cancel := limitRun(ctx, *timeLimit)
	defer cancel()
	g, err := cfg.BuildContext(bctx, prog, cfg.Options{Unroll: *unroll, LoopBounds: lb})
	if err != nil {
		return stoppedEarly(ctx, err, *timeLimit)
	}
	t, err := loadTarget(ctx, *tgt, stderr)
	if err != nil {
		return err
	}
	if *doMeasure && !onThisHost(t) {
		return cli.UsageError(fs, "--measure times the program on this machine's kernel, so it holds only host targets (--target host or x86-64) against it, not %s", t.Name)
	}
	costed := bound.CostWith(g, t, pcv)
	var expected *bound.Costed
	if te, err := calibrate.Expected(t); err != nil {
		return err
	} else if te != nil {
		expected = bound.CostWith(g, te, pcv)
	}
	dst, finish, err := out.Open(stdout)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(dst)
	var res *bound.Result
	if *naive {
		res, err = bound.Naive(bctx, costed, *paths)
	} else {
		opts := bound.SearchOptions{Metric: m, Workers: *workers, TimeLimit: remaining(bctx), MaxChecks: *maxChecks, Tolerance: *tolerance / 100, MaxHeap: int64(*memory) << 20, MaxPacket: *maxPacket, WellFormed: *wellFormed,
			Solver: smt.Config{Command: strings.Fields(*solver), Timeout: *queryTimeout}}
		switch {
		case *stream:
			opts.Progress = bound.Streamer(w)
		case cli.IsTerminal(stderr):
			opts.Progress = progressPrinter(stderr, m)
		}
		res, err = bound.SSP(ctx, costed, opts)
	}
	if err != nil {
		return finish(false, err)
	}
	var measureErr error
	switch {
	case !*doMeasure:
	case !isRoot():
		measureErr = fail.NeedsRootf("bound: --measure needs root (BPF_PROG_TEST_RUN): the bound above was not measured")
	default:
		if err := measure.Paths(costed, expected, res); err != nil {
			return finish(false, err)
		}
	}
	if expected != nil {
		res.SetExpected(expected)
	}
	if *pcapOut != "" {
		if err := atomicfile.Write(*pcapOut, res.WriteExamplePcap); err != nil {
			return finish(false, err)
		}
	}
	if *pprofOut != "" {
		if err := atomicfile.Write(*pprofOut, func(w io.Writer) error { return costed.WriteProfile(w, res) }); err != nil {
			return finish(false, err)
		}
	}
	if *mapsOut != "" {
		if err := writeExampleMaps(*mapsOut, res); err != nil {
			return finish(false, err)
		}
	}
	switch {
	case *stream:
		err = json.NewEncoder(w).Encode(bound.StreamLine{Type: "result", Result: res})
	case *asJSON:
		err = res.WriteJSON(w)
	default:
		err = res.WriteText(w)
	}
	if err == nil {
		err = w.Flush()
	}
	if err := finish(err == nil, err); err != nil {
		return err
	}
	if *require != "" {
		got, what := res.Bound.PacketRate, units.PacketRate
		if reqKind == units.Bits {
			got, what = res.Bound.BitRate, units.BitRate
		}
		if got < reqRate {
			return fail.Requirementf("bound %s is below the required %s", what(got), what(reqRate))
		}
	}
	if measureErr != nil {
		return measureErr
	}
	return ctx.Err()
}

// isRoot says whether the process may load BPF programs and run them
// (tests replace it to see what a user without root gets).
var isRoot = func() bool { return os.Geteuid() == 0 }

// onThisHost says whether t models a core of a host like this one (its
// one component is a CPU), whose bounds BPF_PROG_TEST_RUN can check.
func onThisHost(t *target.Target) bool {
	return len(t.Components) == 1 && t.Components[0].Name == "cpu"
}
