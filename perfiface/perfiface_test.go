package perfiface

import (
	"bytes"
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dpperf/dpperf/internal/golden"

	"github.com/dpperf/dpperf/bpfprog"
	"github.com/dpperf/dpperf/cfg"
	"github.com/dpperf/dpperf/internal/testobj"
	"github.com/dpperf/dpperf/interp"
	"github.com/dpperf/dpperf/interp/inputs"
	"github.com/dpperf/dpperf/mapstate"
	"github.com/dpperf/dpperf/target"
)

func explore(t testing.TB, file, prog string) (*bpfprog.Program, *Exploration) {
	t.Helper()
	g := graphOf(t, file, prog)
	ex, err := Explore(context.Background(), g, ExploreOptions{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if ex.Truncated {
		t.Fatalf("%s: exploration truncated", file)
	}
	return g.Prog, ex
}

// TestPythonGolden: the interfaces of the examples read as protocol fields
// and map membership, at resolution exact and at a coarser one.
func TestPythonGolden(t *testing.T) {
	x86, err := target.Load("x86-64")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		prog, metric string
		res          float64
	}{
		{"fig2", MetricInsns, 0}, {"parser", MetricInsns, 0}, {"parser", MetricInsns, 10},
		{"counter", MetricCost, 0}, {"flowtable", MetricCost, 20},
	} {
		name := c.prog + "-" + c.metric + "-" + trimFloat(c.res) + ".py"
		t.Run(name, func(t *testing.T) {
			_, ex := explore(t, testobj.Built(t, c.prog), "")
			it, err := Build(ex, c.metric, x86, c.prog+".o")
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			if err := it.Python(&b, it.View(max(c.res, 1e-9))); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, name, b.Bytes())
		})
	}
}

// TestThresholdsFig2 is a known answer: fig2's paths cost 10 (short
// packet), 18 (neither IPv4 nor IPv6), 29 (IPv4) and 47 (IPv6)
// instructions, so the tree's spreads are 29 (the ether type tests) and 37
// (the length test).
func TestThresholdsFig2(t *testing.T) {
	_, ex := explore(t, testobj.Built(t, "fig2"), "")
	it, err := Build(ex, MetricInsns, nil, "fig2.o")
	if err != nil {
		t.Fatal(err)
	}
	var costs []float64
	for _, p := range it.Paths {
		costs = append(costs, p.Value.Const)
	}
	slices.Sort(costs)
	if !slices.Equal(costs, []float64{10, 18, 29, 47}) {
		t.Fatalf("path costs %v, want [10 18 29 47]", costs)
	}
	var got []float64
	var classes []int
	for _, th := range it.Thresholds() {
		got = append(got, th.Value)
		classes = append(classes, th.Classes)
	}
	// A class at resolution r holds costs less than 2r apart (its middle
	// is within r of each): the thresholds are half the merged ranges,
	// 29..47 (18), 18..47 (29) and 10..47 (37).
	if !slices.Equal(got, []float64{0, 9, 14.5, 18.5}) || !slices.Equal(classes, []int{4, 3, 2, 1}) {
		t.Fatalf("thresholds %v with classes %v, want [0 9 14.5 18.5] with [4 3 2 1]", got, classes)
	}
	v := it.View(15)
	if v.Root.Test != "pkt.len >= 100" || !v.Root.Then.leaf() || v.Root.Then.Value.Const != 32.5 || v.Root.Else.Value.Const != 10 {
		var b strings.Builder
		it.Python(&b, v)
		t.Fatalf("view at 15:\n%s", b.String())
	}
}

// TestExactAgainstInterpreter is the property behind resolution 1: for
// random packets and map states, the path the interpreter executes is one
// of the feasible paths found (the exploration misses none), and its
// predicted instruction count is exactly the executed count.
func TestExactAgainstInterpreter(t *testing.T) {
	var files []string
	for _, n := range []string{"fig2", "parser", "counter", "flowtable", "call", "loop", "legacy"} {
		files = append(files, testobj.Built(t, n))
	}
	for _, n := range []string{"xdpdump_xdp", "xdpfilt_alw_eth", "xdpfilt_dny_eth", "xsk_def_xdp_prog", "xsk_def_xdp_prog_5.3"} {
		files = append(files, filepath.Join(testobj.LibXDPDir, n+".o"))
	}
	pkts := inputs.Packets(7, 300)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			p, ex := explore(t, f, "")
			it, err := Build(ex, MetricInsns, nil, f)
			if err != nil {
				t.Fatal(err)
			}
			byEdges := map[string]int{}
			for i, pi := range it.Paths {
				byEdges[cfg.PathKey(pi.Edges)] = i
			}
			run := runner(t, p, ex.G)
			seen := map[int]bool{}
			for k, pkt := range pkts {
				res, edges := run(k, pkt)
				i, ok := byEdges[cfg.PathKey(edges)]
				if !ok {
					t.Fatalf("packet %d runs a path the exploration refuted (%d instructions)", k, res.Count)
				}
				seen[i] = true
				if got := it.Paths[i].Insns; got != res.Count {
					t.Fatalf("packet %d: predicted %d instructions, executed %d", k, got, res.Count)
				}
			}
			t.Logf("%d feasible paths, %d met by %d packets", len(it.Paths), len(seen), len(pkts))
		})
	}
}

// runner runs packets on the interpreter from the test start state and
// returns each one's result and graph path.
func runner(t *testing.T, p *bpfprog.Program, g *cfg.Graph) func(k int, pkt []byte) (*interp.Result, []int32) {
	vm, maps := newInterp(t, p, inputs.StartState(p, 3))
	pather := cfg.NewPather(g)
	return func(k int, pkt []byte) (*interp.Result, []int32) {
		t.Helper()
		res, err := vm.Run(interp.Input{Packet: pkt, Ifindex: 1}, maps)
		if err != nil {
			t.Fatalf("packet %d: %v", k, err)
		}
		edges, err := pather.Path(res.Path)
		if err != nil {
			t.Fatalf("packet %d: %v", k, err)
		}
		return res, edges
	}
}

func newInterp(t *testing.T, p *bpfprog.Program, start *mapstate.State) (*interp.Interp, *interp.Maps) {
	t.Helper()
	maps, err := interp.ObjectMaps(p, start, interp.MapOptions{NumCPU: 2})
	if err != nil {
		t.Fatal(err)
	}
	vm, err := interp.New(p, interp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return vm, maps
}
