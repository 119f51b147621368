package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/cilium/ebpf"

	"github.com/dpperf/dpperf/bound"
	"github.com/dpperf/dpperf/bpfprog"
	"github.com/dpperf/dpperf/cfg"
	"github.com/dpperf/dpperf/internal/fail"
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
	fs := newFlagSet("bound", "bound [flags] OBJECT.o", stderr)
	progName := fs.String("program", "", "program `NAME` in the object (needed when it holds several)")
	tgt := fs.String("target", "nfp-agilio-cx", "target `NAME` (see 'dpperf targets') or target file path")
	paths := fs.Int("paths", 1, "print the `K` slowest paths")
	asJSON := fs.Bool("json", false, "write the result as JSON (schema: bound/json.md)")
	require := fs.String("require", "", "exit 1 when the bound is below `RATE` (e.g. 10Mpps, 25Gbit/s)")
	unroll := fs.Int("unroll", 0, "bound loops whose trip count cannot be proven to `N` iterations")
	lb := loopBounds{}
	fs.Var(lb, "loop-bound", "bound one loop: `LOC=N`, LOC a header source line (prog.c:42) or insn:INDEX; repeatable")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		fs.Usage()
		return fail.Usagef("bound: want one object file, got %d arguments", len(pos))
	}
	if *paths < 1 {
		return fail.Usagef("bound: --paths must be at least 1")
	}
	var reqRate float64
	var reqKind units.RateKind
	if *require != "" {
		if reqRate, reqKind, err = units.ParseRate(*require); err != nil {
			return fail.Usagef("bound: --require: %v", err)
		}
	}
	t, err := target.Load(*tgt)
	if err != nil {
		return err
	}
	prog, err := bpfprog.LoadFile(pos[0], *progName)
	if err != nil {
		return err
	}
	switch prog.Type {
	case ebpf.XDP, ebpf.SchedCLS, ebpf.SchedACT:
	default:
		return fail.Inputf(prog.File, "program %s is of type %s; bound analyses packet programs (XDP, TC)", prog.Name, prog.Type)
	}
	g, err := cfg.Build(prog, cfg.Options{Unroll: *unroll, LoopBounds: lb})
	if err != nil {
		return err
	}
	res, err := bound.Naive(ctx, bound.Cost(g, t), *paths)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(stdout)
	if *asJSON {
		err = res.WriteJSON(w)
	} else {
		err = res.WriteText(w)
	}
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
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
	return ctx.Err()
}

func runTargets(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("targets", "targets [NAME]", stderr)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 1 {
		data, err := target.Raw(pos[0])
		if err != nil {
			return err
		}
		_, err = stdout.Write(data)
		return err
	}
	if len(pos) > 1 {
		return fail.Usagef("targets: want at most one target name")
	}
	names := target.Names()
	width := 0
	for _, n := range names {
		width = max(width, len(n))
	}
	for _, n := range names {
		t, err := target.Load(n)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%-*s  %s\n", width, n, t.Description)
	}
	fmt.Fprintln(stdout, "\nShow one with 'dpperf targets NAME'; use your own with --target FILE.yaml.")
	return nil
}
