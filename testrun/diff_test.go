package testrun_test

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dpperf/dpperf/bpfprog"
	"github.com/dpperf/dpperf/internal/bpftest"
	"github.com/dpperf/dpperf/internal/testobj"
	"github.com/dpperf/dpperf/interp"
	"github.com/dpperf/dpperf/interp/inputs"
	"github.com/dpperf/dpperf/mapstate"
	"github.com/dpperf/dpperf/testrun"
)

// objects lists every program the differential test covers.
func objects(t testing.TB) []string {
	var files []string
	m, _ := filepath.Glob(filepath.Join(testobj.Root(), "examples", "xdp", "*.c"))
	for _, c := range m {
		files = append(files, testobj.Built(t, filepath.Base(c[:len(c)-2])))
	}
	files = append(files, testobj.Built(t, "test_xdp_noinline"))
	return append(files, testobj.LibXDP(t)...)
}

// pair is one program loaded twice: in the interpreter and in the kernel,
// from the same starting maps.
type pair struct {
	prog *bpfprog.Program
	it   *interp.Interp
	maps *interp.Maps
	k    *testrun.Runner
}

func newPair(t testing.TB, p *bpfprog.Program, start *mapstate.State) *pair {
	t.Helper()
	k, err := testrun.Load(p, start, testrun.Options{CPU: 0})
	if err != nil {
		t.Fatal(err)
	}
	ids := bpftest.IDs(t, k.Program())
	t.Cleanup(func() {
		if err := k.Close(); err != nil {
			t.Error(err)
		}
		if left := bpftest.StillLoaded(ids); len(left) > 0 {
			t.Errorf("programs %v still loaded after Close", left)
		}
	})
	maps, err := interp.ObjectMaps(p, start, interp.MapOptions{NumCPU: k.NumCPU()})
	if err != nil {
		t.Fatal(err)
	}
	it, err := interp.New(p, interp.Options{CPU: 0})
	if err != nil {
		t.Fatal(err)
	}
	return &pair{prog: p, it: it, maps: maps, k: k}
}

// run sends one packet through both and reports a divergence of verdict or
// output packet. It returns the interpreter's result.
func (pr *pair) run(pkt []byte) (*interp.Result, error) {
	want, err := pr.k.Run(testrun.Input{Packet: pkt})
	if err != nil {
		return nil, err
	}
	got, err := pr.it.Run(interp.Input{Packet: pkt}, pr.maps)
	if err != nil {
		return nil, fmt.Errorf("interpreter: %w (kernel verdict %d)", err, want.Verdict)
	}
	if got.Verdict != want.Verdict {
		return got, fmt.Errorf("verdict %d, kernel %d", got.Verdict, want.Verdict)
	}
	if !bytes.Equal(got.Packet, want.Packet) {
		return got, fmt.Errorf("output packet differs:\n interp %x\n kernel %x", got.Packet, want.Packet)
	}
	return got, nil
}

// TestDifferential runs a few hundred packets through the interpreter and
// BPF_PROG_TEST_RUN for every XDP program we have, from the same starting
// maps: verdicts, output packets and the final maps must agree. Maps a
// run writes after reading the clock or the random generator are left
// out of the final comparison.
func TestDifferential(t *testing.T) {
	pkts := inputs.Packets(1, 300)
	for _, file := range objects(t) {
		ps, err := bpfprog.XDPPrograms(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ps {
			name := p.Name
			t.Run(filepath.Base(file)+"/"+name, func(t *testing.T) {
				if verifierRejects(name) {
					t.Skipf("the kernel's verifier rejects %s (too many paths); covered by the interpreter tests", name)
				}
				pr := newPair(t, p, inputs.StartState(p, 1))
				nondet := map[string]bool{}
				verdicts := map[uint32]int{}
				for i, pkt := range pkts {
					res, err := pr.run(pkt)
					if err != nil {
						t.Fatalf("packet %d (%d bytes %x): %v", i, len(pkt), pkt, err)
					}
					verdicts[res.Verdict]++
					if res.Nondeterministic {
						for m := range res.MapWrites {
							nondet[m] = true
						}
					}
				}
				got := pr.maps.State()
				want, err := pr.k.State()
				if err != nil {
					t.Fatal(err)
				}
				for m := range nondet {
					delete(got.Maps, m)
					delete(want.Maps, m)
				}
				if d := mapstate.Diff(p, got, want); len(d) > 0 {
					t.Errorf("final maps differ (interp != kernel):\n%s", join(d))
				}
				t.Logf("%d packets, verdicts %v, maps compared %v, written after clock reads %v", len(pkts), verdicts, keys(got.Maps), keys(nondet))
			})
		}
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func join(d []string) string {
	if len(d) > 20 {
		d = append(d[:20:20], fmt.Sprintf("... and %d more", len(d)-20))
	}
	var b bytes.Buffer
	for _, s := range d {
		b.WriteString("  " + s + "\n")
	}
	return b.String()
}

// verifierRejects names the examples with 2^64 paths (explode,
// explode_pairs): the verifier gives up after a million instructions, so
// the kernel cannot run them.
func verifierRejects(name string) bool { return strings.HasPrefix(name, "explode") }
