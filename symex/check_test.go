package symex

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/dpperf/dpperf/bpfprog"
	"github.com/dpperf/dpperf/cfg"
	"github.com/dpperf/dpperf/internal/testobj"
	"github.com/dpperf/dpperf/pathenum"
	"github.com/dpperf/dpperf/smt"
)

func graphOf(t testing.TB, obj, prog string) *cfg.Graph {
	t.Helper()
	p, err := bpfprog.LoadFile(obj, prog)
	return graphFrom(t, p, err)
}

// graphFrom builds the graph of p, which err (of loading p) must be nil for.
func graphFrom(t testing.TB, p *bpfprog.Program, err error) *cfg.Graph {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	g, err := cfg.Build(p, cfg.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// allPaths enumerates every path of g (longest first by edge count).
func allPaths(t testing.TB, g *cfg.Graph, limit int) [][]int32 {
	t.Helper()
	pg := &pathenum.Graph{Nodes: len(g.Nodes), Src: int32(g.Source), Dst: int32(g.Sink)}
	for _, e := range g.Edges {
		pg.From = append(pg.From, int32(e.From))
		pg.To = append(pg.To, int32(e.To))
		pg.Weight = append(pg.Weight, 1)
	}
	en, err := pathenum.New(pg)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]int32
	for len(out) < limit {
		p, ok := en.Next()
		if !ok {
			break
		}
		out = append(out, en.Edges(p, nil))
	}
	return out
}

// TestFig2Classes: Figure 2 has four packet classes; of its paths, exactly
// those four can run, and the one through both the IPv4 counter and the
// IPv6 loop cannot.
func TestFig2Classes(t *testing.T) {
	g := graphOf(t, testobj.Built(t, "fig2"), "")
	c, err := NewChecker(g, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	paths := allPaths(t, g, 1000)
	sat := 0
	for _, p := range paths {
		out, err := c.Check(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		switch out.Result {
		case smt.Sat:
			sat++
		case smt.Unknown:
			t.Fatalf("unknown on a small path")
		case smt.Unsat:
			if out.Prefix < 1 || out.Prefix > len(p) {
				t.Fatalf("refuted prefix %d of a %d-edge path", out.Prefix, len(p))
			}
		}
	}
	t.Logf("%d paths, %d satisfiable, %d solver checks, %d folded", len(paths), sat, c.Checks, c.Folded)
	// Classes: short (<100 B), IPv4, IPv6, other. The lookup of index 0 in
	// a one-element array cannot fail, so its NULL branch is impossible.
	if sat != 4 {
		t.Fatalf("%d satisfiable paths, want 4", sat)
	}
}

// TestStalledSolverIsReplaced: a solver that stops answering is killed and
// replaced, and its path counted as possible (Unknown), which keeps a
// bound valid; the search goes on with the new solver.
func TestStalledSolverIsReplaced(t *testing.T) {
	g := graphOf(t, testobj.Built(t, "fig2"), "")
	silent := smt.Config{Command: []string{"sh", "-c", "cat >/dev/null"}, Timeout: 20 * time.Millisecond}
	c, err := NewChecker(g, Options{Solver: silent})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	paths := allPaths(t, g, 2)
	for i, p := range paths {
		out, err := c.Check(context.Background(), p)
		if err != nil {
			t.Fatalf("path %d: %v", i, err)
		}
		if out.Result != smt.Unknown {
			t.Fatalf("path %d: %v from a solver that never answers", i, out.Result)
		}
		if c.Restarts != i+1 {
			t.Fatalf("after path %d: %d restarts", i, c.Restarts)
		}
	}
}

// TestEqualityFolds: explode compares the same packet byte (read through a
// volatile pointer, so loaded again each time) with 64 constants. Once a
// path has taken one equality, a second one folds to false without the
// solver: the second load is the same term, and the path knows its value.
func TestEqualityFolds(t *testing.T) {
	g := graphOf(t, testobj.Built(t, "explode"), "")
	c, err := NewChecker(g, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	paths := allPaths(t, g, 20)
	refuted := 0
	for _, p := range paths {
		out, err := c.Check(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		if out.Result == smt.Unsat {
			refuted++
		}
	}
	if refuted == 0 || c.Folded != refuted || c.Checks != 0 {
		t.Fatalf("%d of %d paths refuted, %d folded, %d solver checks; want every refutation folded, no check",
			refuted, len(paths), c.Folded, c.Checks)
	}
}

// TestExampleWithUnusedAbstractions: the transcoder's computed bytes go
// only into the packet, so with them abstracted its example needs no
// exact solving and is exact as it is; the longest path converts the whole
// 160-byte payload, and its packet is the smallest that holds it.
func TestExampleWithUnusedAbstractions(t *testing.T) {
	g := graphOf(t, testobj.Built(t, "rtp_transcode"), "")
	c, err := NewChecker(g, Options{Abstract: 20})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	p := allPaths(t, g, 1)[0]
	out, err := c.Check(context.Background(), p)
	if err != nil || out.Result != smt.Sat {
		t.Fatalf("longest path: %v, %v", out.Result, err)
	}
	if len(c.comments("abstract")) == 0 {
		t.Fatal("no value was abstracted: the test checks nothing")
	}
	ex, err := c.Example(context.Background())
	if err != nil || ex == nil {
		t.Fatalf("example: %v, %v", ex, err)
	}
	if ex.Approx || len(ex.Packet) != 14+20+8+12+160 {
		t.Errorf("example of %d bytes, approximate %v; want 214 bytes, exact", len(ex.Packet), ex.Approx)
	}
}

// labelsVerdict runs examples/xdp/labels.c on a packet.
func labelsVerdict(pkt []byte) uint64 {
	const drop, pass, tx = 1, 2, 3
	hash, left := uint32(7), uint32(0)
	for i := 0; i < 6; i++ {
		if 42+i+1 > len(pkt) {
			return pass
		}
		c := pkt[42+i]
		if left == 0 {
			if c == 0 {
				break
			}
			if c > 2 {
				return drop
			}
			left = uint32(c)
		} else {
			left--
			hash = hash*31 + uint32(c)
		}
	}
	if hash == 12345 {
		return tx
	}
	return pass
}

// TestExamplesWithHashes: with the label walk's hash abstracted, every
// satisfiable path's example is exact, whether the exact hash follows from
// the free-hash packet's bytes (a path that only tests it against 12345
// and fails) or must be solved for (the path where it equals 12345): the
// program, run on the example, returns the verdict the path predicts.
func TestExamplesWithHashes(t *testing.T) {
	g := graphOf(t, testobj.Built(t, "labels"), "")
	c, err := NewChecker(g, Options{Abstract: 8})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	verdicts := map[uint64]int{}
	abstracted := 0
	for _, p := range allPaths(t, g, 1000) {
		out, err := c.Check(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		if out.Result != smt.Sat {
			continue
		}
		if len(c.comments("abstract")) > 0 {
			abstracted++
		}
		ex, err := c.Example(context.Background())
		if errors.Is(err, ErrHashRefuted) {
			continue // possible only with a free hash
		}
		if err != nil || ex == nil {
			t.Fatalf("example: %v, %v", ex, err)
		}
		if got := labelsVerdict(ex.Packet); ex.Approx || got != ex.Verdict {
			t.Errorf("path %v: example %x (approximate %v) returns %d, the path %d", p, ex.Packet, ex.Approx, got, ex.Verdict)
		}
		verdicts[ex.Verdict]++
	}
	if abstracted == 0 || verdicts[3] == 0 || verdicts[2] == 0 {
		t.Errorf("%d paths with abstracted hashes, verdicts %v: want some, and both XDP_TX and XDP_PASS", abstracted, verdicts)
	}
}

// TestExampleUninverted: hashes the solver could not solve for on one path
// are not solved for again on another that tests them: the example of the
// label walk's path where the hash equals 12345 stays approximate, with
// the model of the free hash, and is counted. Without the record the same
// path's example is exact (TestExamplesWithHashes).
func TestExampleUninverted(t *testing.T) {
	g := graphOf(t, testobj.Built(t, "labels"), "")
	c, err := NewChecker(g, Options{Abstract: 8})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, p := range allPaths(t, g, 1000) {
		out, err := c.Check(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		eqs := c.abstractions()
		if out.Result != smt.Sat || len(eqs) == 0 || !c.abstractionsConstrain(c.levels[len(c.levels)-1].st) {
			continue
		}
		c.uninverted = map[string]bool{strings.Join(eqs, " "): true}
		before := c.Uninverted
		ex, err := c.Example(context.Background())
		if err != nil || ex == nil {
			t.Fatalf("example: %v, %v", ex, err)
		}
		if ex.Verdict != 3 {
			continue // the free-hash packet, pinned, already takes this path
		}
		if !ex.Approx || c.Uninverted != before+1 {
			t.Errorf("example approximate %v, %d uninverted; want approximate, 1", ex.Approx, c.Uninverted-before)
		}
		return
	}
	t.Fatal("no path tests the hash against 12345: the test checks nothing")
}
