package main

import (
	"bufio"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dpperf/dpperf/bound"
	"github.com/dpperf/dpperf/internal/fail"
	"github.com/dpperf/dpperf/internal/testobj"
	"github.com/dpperf/dpperf/mapstate"
	"github.com/dpperf/dpperf/measure"
)

// sspCase runs the search on one program and checks what every search
// must deliver: a satisfiable path no faster than the naive one, an example
// packet that tshark reads, map contents in the map-state format, and, on
// the kernel, the predicted verdict and path. How the measured rate
// compares with the bound is timing, not behaviour: `make evidence`
// checks it on an idle machine (docs/evidence).
func sspCase(t *testing.T, obj string, extra ...string) *bound.Result {
	t.Helper()
	dir := t.TempDir()
	pcap, maps := filepath.Join(dir, "ex.pcap"), filepath.Join(dir, "maps.json")
	args := append([]string{"bound", "--json", "--workers", "1", "--measure", "--target", "x86-64", "--pcap", pcap, "--maps", maps, obj}, extra...)
	out, errs, code := dpperf(t, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var r bound.Result
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if r.Kind != "ssp" || len(r.Paths) != 1 {
		t.Fatalf("kind %s with %d paths", r.Kind, len(r.Paths))
	}
	p := r.Paths[0]
	if r.Naive == nil || r.Bound.PathRate < r.Naive.PathRate*(1-1e-9) {
		t.Errorf("SSP path rate %g below the naive %v", r.Bound.PathRate, r.Naive)
	}
	if p.Example == nil {
		t.Fatalf("no example packet")
	}
	if p.Example.Length < 60 || p.Example.Length != len(p.Example.Packet)/2 {
		t.Errorf("example of %d bytes (%d hex digits)", p.Example.Length, len(p.Example.Packet))
	}
	if _, err := mapstate.ParseFile(maps); err != nil {
		t.Errorf("map contents: %v", err)
	}
	tshark, err := exec.Command("tshark", "-r", pcap, "-T", "fields", "-e", "frame.len").Output()
	if err != nil {
		t.Fatalf("tshark: %v", err)
	}
	if got := strings.TrimSpace(string(tshark)); got != itoa(p.Example.Length) {
		t.Errorf("tshark reads frame length %q, want %d", got, p.Example.Length)
	}
	m := p.Measured
	if m == nil {
		t.Fatal("not measured")
	}
	if m.Timings != measure.Timings || m.Repeat != measure.Repeat || m.NsPerPacket <= 0 {
		t.Errorf("measured: %d timings of %d runs, %g ns per packet", m.Timings, m.Repeat, m.NsPerPacket)
	}
	unfillable := strings.Contains(m.Mismatch, "cannot be filled")
	if !unfillable && (!m.VerdictMatches || !m.PathMatches) {
		t.Errorf("measured: verdict match %v (kernel %d, interpreter %d, predicted %d), path match %v %s",
			m.VerdictMatches, m.KernelVerdict, m.InterpVerdict, p.Example.Verdict, m.PathMatches, m.Mismatch)
	}
	if unfillable {
		t.Logf("not replayable: %s", m.Mismatch)
	}
	return &r
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func TestBoundSSPExamples(t *testing.T) {
	for _, name := range []string{"fig2", "parser", "counter", "loop", "call", "legacy"} {
		t.Run(name, func(t *testing.T) {
			r := sspCase(t, built(t, name))
			if name == "fig2" {
				ex := r.Paths[0].Example
				// Under x86-64 the counter's map call outweighs the
				// IPv6 loop: the IPv4 branch is the slowest possible.
				if ex.Length != 100 || !strings.Contains(strings.Join(ex.Layers, " "), "type IPv4 (0x0800)") {
					t.Errorf("fig2 example: %d bytes, %v; want IPv4 of 100 bytes", ex.Length, ex.Layers)
				}
			}
		})
	}
}

// TestBoundSSPNoinline: the kernel's test_xdp_noinline, whose slowest
// paths test the flow's hash; the checker takes the hash as free and the
// example is solved with the exact one, so the kernel follows the path.
func TestBoundSSPNoinline(t *testing.T) {
	for _, prog := range []string{"balancer_ingress_v4", "balancer_ingress_v6"} {
		t.Run(prog, func(t *testing.T) {
			r := sspCase(t, built(t, "test_xdp_noinline"), "--program", prog)
			if ex := r.Paths[0].Example; ex.Approx {
				t.Errorf("example approximate: the hashes were not solved for")
			}
		})
	}
}

func TestBoundSSPLibXDP(t *testing.T) {
	for _, obj := range testobj.LibXDP(t) {
		base := strings.TrimSuffix(filepath.Base(obj), ".o")
		if base == "xdpdump_bpf" {
			continue
		}
		t.Run(base, func(t *testing.T) {
			var extra []string
			if base == "xdp-dispatcher" {
				extra = []string{"--program", "xdp_dispatcher"}
			}
			sspCase(t, obj, extra...)
		})
	}
}

// streamed runs bound --stream on an example, ended after 300 paths (the
// same paths on every machine: one worker, a check limit, not a time
// limit) and returns the streamed bounds and the final result. The series must rise
// and end at or above the reported bound.
func streamed(t *testing.T, name string) ([]float64, *bound.Result) {
	t.Helper()
	out, errs, code := dpperf(t, "bound", "--target", "nfp-agilio-cx", "--stream", "--workers", "1", "--max-checks", "300", built(t, name))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var bounds []float64
	var last bound.StreamLine
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var l bound.StreamLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		if l.Type == "progress" {
			bounds = append(bounds, l.Bound)
		}
		last = l
	}
	if last.Type != "result" || last.Result == nil {
		t.Fatalf("last line is not the result")
	}
	if len(bounds) < 3 {
		t.Fatalf("only %d bounds streamed", len(bounds))
	}
	for i := 1; i < len(bounds); i++ {
		if bounds[i] < bounds[i-1] {
			t.Fatalf("bound fell from %g to %g", bounds[i-1], bounds[i])
		}
	}
	if bounds[len(bounds)-1] <= bounds[0] {
		t.Fatalf("bound never improved: %v", bounds)
	}
	r := last.Result
	if r.Kind == "intermediate" && r.Search.Checked != 300 {
		t.Fatalf("intermediate after %d paths, want the 300 of --max-checks", r.Search.Checked)
	}
	if r.Kind == "intermediate" && r.Bound.PacketRate > bounds[len(bounds)-1]*1.0000001 {
		t.Fatalf("intermediate bound %g above the last streamed %g", r.Bound.PacketRate, bounds[len(bounds)-1])
	}
	return bounds, r
}

// TestBoundStreamExplode: every slow path of explode is contradictory;
// cut short, the search reports an intermediate bound, and the streamed
// series rises.
func TestBoundStreamExplode(t *testing.T) {
	if _, r := streamed(t, "explode"); r.Kind != "intermediate" && r.Kind != "ssp" {
		t.Fatalf("kind %s", r.Kind)
	}
}

// TestBoundStreamExplodePairs: explode_pairs relates two unknown bytes in
// each contradiction, so folding cannot refute every path and the solver
// must; its search cannot end within 300 paths, and every path it
// decided was impossible.
func TestBoundStreamExplodePairs(t *testing.T) {
	_, r := streamed(t, "explode_pairs")
	s := r.Search
	if r.Kind != "intermediate" || s.Refuted != s.Checked || s.Unknown != 0 {
		t.Fatalf("kind %s, %d paths checked, %d refuted, %d unknown", r.Kind, s.Checked, s.Refuted, s.Unknown)
	}
	if s.Folded >= s.Refuted || s.Solver == 0 {
		t.Fatalf("%d of %d refuted by folding, %d solver checks: the solver was not needed", s.Folded, s.Refuted, s.Solver)
	}
}

func TestBoundBadSolver(t *testing.T) {
	_, errs, code := dpperf(t, "bound", "--target", "nfp-agilio-cx", "--solver", "/nonexistent/z3", built(t, "fig2"))
	if code == 0 || !strings.Contains(errs, "not found") {
		t.Fatalf("exit %d: %s", code, errs)
	}
}

// TestBoundStatefulExample: flowtable's slowest path inserts a new flow,
// so the repeats of its example find the flow and take another path; the
// measurement says so and times the path itself in single runs. counter's
// example changes its map too, but every repeat takes the same path.
func TestBoundStatefulExample(t *testing.T) {
	m := sspCase(t, built(t, "flowtable")).Paths[0].Measured
	if !m.Stateful || m.SingleRuns == 0 || !(m.SingleNs > 0) {
		t.Errorf("flowtable: stateful %v, %d single runs, %g ns", m.Stateful, m.SingleRuns, m.SingleNs)
	}
	if m := sspCase(t, built(t, "counter")).Paths[0].Measured; m.Stateful {
		t.Error("counter: its repeats are taken as leaving the path")
	}
}

// TestBoundPCVAssumption: --pcv prices the map operations' PCVs, lowers
// the naive bound, and is recorded in the JSON; a bad value is a usage
// error.
func TestBoundPCVAssumption(t *testing.T) {
	rate := func(args ...string) *bound.Result {
		t.Helper()
		return boundJSON(t, append([]string{"bound", "--naive", "--json", "--target", "x86-64"}, append(args, built(t, "flowtable"))...))
	}
	base, worse := rate(), rate("--pcv", "traversals=8,evicted=1")
	if !(worse.Bound.PacketRate < base.Bound.PacketRate) || worse.PCV["traversals"] != 8 || base.PCV != nil {
		t.Fatalf("bound %g -> %g, pcv %v / %v", base.Bound.PacketRate, worse.Bound.PacketRate, base.PCV, worse.PCV)
	}
	if !strings.Contains(strings.Join(worse.Notes, "\n"), "priced with evicted=1,traversals=8") ||
		!strings.Contains(strings.Join(base.Notes, "\n"), "PCVs at 0") {
		t.Errorf("notes: %q / %q", base.Notes, worse.Notes)
	}
	if _, errs, code := dpperf(t, "bound", "--pcv", "trips=2", built(t, "flowtable")); code != 2 || !strings.Contains(errs, "not a PCV of map operations") {
		t.Errorf("bad --pcv: exit %d: %s", code, errs)
	}
}

// TestBoundMeasureRefusals: --measure holds only host targets against the
// kernel; without root the bound is still printed, then the missing
// measurement is said, with its own exit code.
func TestBoundMeasureRefusals(t *testing.T) {
	_, errs, code := dpperf(t, "bound", "--measure", "--target", "nfp-agilio-cx", built(t, "fig2"))
	if code != fail.ExitInput || !strings.Contains(errs, "only host targets") {
		t.Errorf("NFP target: exit %d: %s", code, errs)
	}
	defer func(f func() bool) { isRoot = f }(isRoot)
	isRoot = func() bool { return false }
	out, errs, code := dpperf(t, "bound", "--json", "--measure", "--target", "x86-64", built(t, "fig2"))
	var r bound.Result
	if err := json.Unmarshal([]byte(out), &r); err != nil || r.Kind != "ssp" || r.Paths[0].Measured != nil {
		t.Errorf("without root: %v, kind %s: the bound should be printed, unmeasured", err, r.Kind)
	}
	if code != fail.ExitNeedsRoot || !strings.Contains(errs, "--measure needs root") {
		t.Errorf("without root: exit %d: %s", code, errs)
	}
}

// TestBoundPprofTopLine: go tool pprof reads the profile bound --pprof
// writes, and its top source line is the report's dearest line.
func TestBoundPprofTopLine(t *testing.T) {
	file := filepath.Join(t.TempDir(), "flowtable.pprof")
	out, errs, code := dpperf(t, "bound", "--target", "x86-64", "--json", "--naive", "--pprof", file, built(t, "flowtable"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var r bound.Result
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	costs := map[string]float64{}
	for _, l := range r.Paths[0].Lines {
		if l.Loc != "-" {
			costs[l.Loc] += l.Cost["cpu"]
		}
	}
	top := ""
	for loc, c := range costs {
		if top == "" || c > costs[top] {
			top = loc
		}
	}
	cmd := exec.Command("go", "tool", "pprof", "-top", "-lines", file)
	pp, err := cmd.Output()
	if err != nil {
		t.Fatalf("go tool pprof: %v", err)
	}
	var first string
	for _, line := range strings.Split(string(pp), "\n") {
		if f := strings.Fields(line); len(f) >= 6 && strings.HasSuffix(f[1], "%") && f[len(f)-1] != "-" {
			first = f[len(f)-1]
			break
		}
	}
	if first != top {
		t.Errorf("pprof's top line %q, the report's dearest %q\n%s", first, top, pp)
	}
}
