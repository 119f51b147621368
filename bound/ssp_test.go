package bound

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/dpperf/dpperf/bpfprog"
	"github.com/dpperf/dpperf/cfg"
	"github.com/dpperf/dpperf/internal/testobj"
	"github.com/dpperf/dpperf/target"
)

func costed(t testing.TB, name, tgt string) *Costed {
	t.Helper()
	return Cost(graphOf(t, name), mustTarget(t, tgt))
}

// graphOf is the graph of a built test program.
func graphOf(t testing.TB, name string) *cfg.Graph {
	t.Helper()
	p, err := bpfprog.LoadFile(testobj.Built(t, name), "")
	if err != nil {
		t.Fatal(err)
	}
	g, err := cfg.Build(p, cfg.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestFig2SSP: the naive path of Figure 2 is impossible (IPv4 and IPv6 at
// once); the slowest satisfiable one is IPv6 with at least 100 bytes.
func TestFig2SSP(t *testing.T) {
	c := costed(t, "fig2", "nfp-agilio-cx")
	var series []Progress
	r, err := SSP(context.Background(), c, SearchOptions{Workers: 1, Progress: func(p Progress) { series = append(series, p) }})
	if err != nil {
		t.Fatal(err)
	}
	if r.Kind != "ssp" || len(r.Paths) != 1 {
		t.Fatalf("kind %s with %d paths", r.Kind, len(r.Paths))
	}
	ex := r.Paths[0].Example
	if ex == nil {
		t.Fatal("no example packet")
	}
	if ex.Length < 100 || !ex.Minimal || ex.Length != 100 {
		t.Errorf("example of %d bytes (minimal %v), want exactly 100", ex.Length, ex.Minimal)
	}
	// One of the two branches, never both (that path is impossible):
	// which one is slower depends on the target.
	if l := strings.Join(ex.Layers, "\n"); !strings.Contains(l, "type IPv4 (0x0800)") && !strings.Contains(l, "type IPv6 (0x86dd)") {
		t.Errorf("example is neither IPv4 nor IPv6: %v", ex.Layers)
	}
	if r.Naive == nil || r.Bound.PathRate <= r.Naive.PathRate {
		t.Errorf("SSP path rate %g not above the naive %v", r.Bound.PathRate, r.Naive)
	}
	if r.Search.Refuted < 1 {
		t.Errorf("no path refuted")
	}
	for i := 1; i < len(series); i++ {
		if series[i].Bound < series[i-1].Bound {
			t.Errorf("bound fell from %g to %g", series[i-1].Bound, series[i].Bound)
		}
	}
	t.Logf("naive %g, ssp %g pps; %+v", r.Naive.PathRate, r.Bound.PathRate, *r.Search)
}

// TestSSPHeapLimit: explode_far's paths are nearly all contradictory and
// the enumeration's state grows with every one. With a heap limit the
// search ends before it is decided, intermediate, and says why; the
// bound it reports is still one every slower path was refuted for.
func TestSSPHeapLimit(t *testing.T) {
	c := costed(t, "explode_far", "nfp-agilio-cx")
	r, err := SSP(context.Background(), c, SearchOptions{Metric: PacketRate, Workers: 1, MaxHeap: 24 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if r.Kind != "intermediate" || !slices.ContainsFunc(r.Notes, func(n string) bool { return strings.Contains(n, "heap reached 24 MiB") }) {
		t.Fatalf("kind %s, notes %q: want an intermediate bound that names the heap limit", r.Kind, r.Notes)
	}
	if r.Search.Checked == 0 || r.Bound.PacketRate < r.Naive.PacketRate {
		t.Errorf("%d paths checked, bound %g below the naive %g", r.Search.Checked, r.Bound.PacketRate, r.Naive.PacketRate)
	}
	t.Logf("%d paths checked before the heap reached 24 MiB", r.Search.Checked)
}

// TestSSPTolerance: a search that may stop within a tolerance reports an
// intermediate bound no higher than the exact one and at most the
// tolerance below it, with fewer or as many paths checked, and says why
// it ended.
func TestSSPTolerance(t *testing.T) {
	for _, name := range []string{"fig2", "parser", "flowtable"} {
		c := costed(t, name, "x86-64")
		exact, err := SSP(context.Background(), c, SearchOptions{Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		const tol = 0.5
		r, err := SSP(context.Background(), c, SearchOptions{Workers: 1, Tolerance: tol})
		if err != nil {
			t.Fatal(err)
		}
		got, want := r.Bound.PacketRate, exact.Bound.PacketRate
		if got > want*(1+1e-9) || got < want*(1-tol)*(1-1e-9) {
			t.Errorf("%s: bound %g with tolerance %g, exact %g", name, got, tol, want)
		}
		if r.Search.Checked > exact.Search.Checked {
			t.Errorf("%s: %d paths checked with a tolerance, %d without", name, r.Search.Checked, exact.Search.Checked)
		}
		noted := slices.ContainsFunc(r.Notes, func(n string) bool { return strings.Contains(n, "within its tolerance of 50%") })
		if early := r.Kind == "intermediate"; early != noted || (!early && got != want) {
			t.Errorf("%s: kind %s, noted %v, bound %g (exact %g)", name, r.Kind, noted, got, want)
		}
		t.Logf("%s: %s %g (exact %g), %d of %d paths checked", name, r.Kind, got, want, r.Search.Checked, exact.Search.Checked)
	}
}

// TestSSPToleranceEndsOutcomeSearch: under a throughput calibration of a
// Xeon guest (testdata), xdpfilt_alw_all's satisfiable paths price their
// lookups by their examples' outcomes more than 10% above the dearest
// price the enumeration orders them by, so the exact search checks
// thousands of them. With a 20% tolerance it ends after a few, with an
// intermediate bound that says why (sound by construction: the unchecked
// paths' rate) and no lower than the naive bound.
func TestSSPToleranceEndsOutcomeSearch(t *testing.T) {
	tg, err := target.Load("testdata/x86-64-throughput.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p, err := bpfprog.LoadFile(filepath.Join(testobj.LibXDPDir, "xdpfilt_alw_all.o"), "")
	if err != nil {
		t.Fatal(err)
	}
	g, err := cfg.Build(p, cfg.Options{})
	if err != nil {
		t.Fatal(err)
	}
	const tol = 0.2
	r, err := SSP(context.Background(), Cost(g, tg), SearchOptions{Workers: 1, Tolerance: tol, MaxChecks: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if r.Kind != "intermediate" || !slices.ContainsFunc(r.Notes, func(n string) bool { return strings.Contains(n, "within its tolerance of 20%") }) {
		t.Fatalf("kind %s, notes %q: want an intermediate bound ended by the tolerance", r.Kind, r.Notes)
	}
	if r.Bound.PacketRate < r.Naive.PacketRate {
		t.Errorf("bound %g below the naive %g", r.Bound.PacketRate, r.Naive.PacketRate)
	}
	if r.Search.Checked >= 100 {
		t.Errorf("%d paths checked: the tolerance did not end the search", r.Search.Checked)
	}
}

// TestSSPLeavesNoSolver: when a search returns, cut short with checks in
// flight on two workers, every solver it started has been killed and
// reaped: none is left a child of this process to keep a core busy.
func TestSSPLeavesNoSolver(t *testing.T) {
	p, err := bpfprog.LoadFile(testobj.Built(t, "test_xdp_noinline"), "balancer_ingress_v4")
	if err != nil {
		t.Fatal(err)
	}
	g, err := cfg.Build(p, cfg.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := Cost(g, mustTarget(t, "x86-64"))
	for _, n := range []int{3, 30, 130} {
		if _, err := SSP(context.Background(), c, SearchOptions{Workers: 2, MaxChecks: n}); err != nil {
			t.Fatal(err)
		}
		if kids := children(t); len(kids) > 0 {
			t.Fatalf("processes left after the search: %v", kids)
		}
	}
}

// children lists this process's child processes (pid and command).
func children(t *testing.T) []string {
	t.Helper()
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		t.Fatal(err)
	}
	self := strconv.Itoa(os.Getpid())
	var out []string
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // ended meanwhile
		}
		// pid (comm) state ppid ...; comm may hold spaces.
		s := string(b)
		end := strings.LastIndexByte(s, ')')
		if end < 0 {
			continue
		}
		if f := strings.Fields(s[end+1:]); len(f) > 1 && f[1] == self {
			out = append(out, s[:end+1])
		}
	}
	return out
}
