package perfiface

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/dpperf/dpperf/bpfprog"
	"github.com/dpperf/dpperf/cfg"
	"github.com/dpperf/dpperf/internal/testobj"
	"github.com/dpperf/dpperf/interp"
	"github.com/dpperf/dpperf/interp/inputs"
)

// coarseInterface refines a program's interface as dpperf interface does
// by default and returns it with the view at the chosen resolution.
// With depth > 0 it explores every path through at most depth decisions
// instead (--max-depth, exact view).
func coarseInterface(t *testing.T, file, prog string, depth int) (*bpfprog.Program, *cfg.Graph, *Interface, float64) {
	t.Helper()
	g := graphOf(t, file, prog)
	p := g.Prog
	opts := RefineOptions{Classes: DefaultClasses}
	opts.Workers, opts.Metric = 2, MetricInsns
	var (
		ex  *Exploration
		err error
	)
	if depth > 0 {
		ex, err = Explore(context.Background(), g, ExploreOptions{Workers: 2, MaxDepth: depth})
	} else {
		ex, err = Refine(context.Background(), g, opts)
	}
	if err != nil {
		t.Fatal(err)
	}
	if ex.Truncated || ex.Stopped || ex.Root == nil {
		t.Fatalf("%s: refinement stopped early", file)
	}
	it, err := Build(ex, MetricInsns, nil, file)
	if err != nil {
		t.Fatal(err)
	}
	if depth > 0 {
		return p, g, it, 1e-9
	}
	return p, g, it, it.Choose(DefaultClasses)
}

// TestModuleAgainstInterpreter writes the Python module of parser,
// flowtable, xdpfilt_alw_all and Katran's balancer_ingress_v4, runs it
// with python3 on a capture of generated packets and a generated map
// state, and checks every frame's class and cost against the Go side: the
// interpreter's run of the packet (from that state), mapped to its leaf
// by its path (Interface.Locate), and that leaf's value.
//
// The interfaces are the coarse default (Refine, at the resolution Choose
// picks), not --resolution 0: the exact interfaces of xdpfilt_alw_all
// and Katran have 10^4 to 10^5 paths; and, to reach the IPv6
// extension-header walk, xdpfilt_alw_all's paths through 14 decisions
// (--max-depth 14, exact view; deeper subtrees are bounded classes). A coarse class is still a set of
// whole paths, so every packet has exactly one class, and its cost in
// the Python is the class's value (the middle of its range), which is
// what is compared. Where a test reads a value neither the packet nor the
// state gives (Katran's hash, an update's result), the Python lists every
// class the outcomes lead to, and the interpreter's class must be among
// them.
func TestModuleAgainstInterpreter(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Fatal("python3 is missing: scripts/setup.sh installs it")
	}
	for _, c := range []struct {
		name, file, prog string
		packets, depth   int
	}{
		{"parser", testobj.Built(t, "parser"), "", 300, 0},
		{"flowtable", testobj.Built(t, "flowtable"), "", 300, 0},
		{"xdpfilt_alw_all", filepath.Join(testobj.LibXDPDir, "xdpfilt_alw_all.o"), "", 300, 0},
		// Deeper: the IPv6 extension-header walk and stacked VLAN tags.
		{"xdpfilt_alw_all_depth14", filepath.Join(testobj.LibXDPDir, "xdpfilt_alw_all.o"), "", 300, 14},
		// Deeper still: walks through fragment and authentication headers.
		{"xdpfilt_alw_all_depth18", filepath.Join(testobj.LibXDPDir, "xdpfilt_alw_all.o"), "", 100, 18},
		{"katran_v4", testobj.Built(t, "test_xdp_noinline"), "balancer_ingress_v4", 150, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, g, it, r := coarseInterface(t, c.file, c.prog, c.depth)
			d, err := NewDeployment(it, DeployOptions{Resolution: r})
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			mod := filepath.Join(dir, "iface.py")
			var src bytes.Buffer
			if err := it.Module(&src, d.View); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(mod, src.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			pkts := append(inputs.Packets(5, c.packets), walkPackets(60)...)
			state := inputs.StartState(p, 5)
			statePath := filepath.Join(dir, "state.json")
			if err := state.WriteFile(statePath); err != nil {
				t.Fatal(err)
			}
			capture := filepath.Join(dir, "capture.pcap")
			writePcap(t, capture, pkts)

			// The Go side: each packet alone from the state, as the Python
			// evaluates it.
			vm, err := interp.New(p, interp.Options{})
			if err != nil {
				t.Fatal(err)
			}
			pather := cfg.NewPather(g)
			want := make([]int, len(pkts)) // class, -1: not run
			paths := make([]int, len(pkts))
			for k, pkt := range pkts {
				want[k] = -1
				if len(pkt) < 14 {
					continue
				}
				maps, err := interp.ObjectMaps(p, state, interp.MapOptions{NumCPU: 2})
				if err != nil {
					t.Fatal(err)
				}
				res, err := vm.Run(interp.Input{Packet: pkt, Ifindex: 1}, maps)
				if err != nil {
					continue
				}
				edges, err := pather.Path(res.Path)
				if err != nil {
					t.Fatalf("packet %d: %v", k, err)
				}
				i, ok := it.Locate(edges)
				if !ok {
					t.Fatalf("packet %d: its path is in no class", k)
				}
				want[k], paths[k] = d.pathClass[i], i
			}

			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			out, err := exec.CommandContext(ctx, "python3", mod, capture, "--maps", statePath).CombinedOutput()
			if err != nil {
				t.Fatalf("python3 iface.py: %v\n%s", err, out)
			}
			got := parseFrames(t, string(out))
			checked, several := 0, 0
			for k := range pkts {
				w := want[k]
				if w < 0 {
					continue
				}
				g, ok := got[k]
				if !ok {
					t.Errorf("frame %d: no class in the Python's output", k)
					continue
				}
				checked++
				leaf := d.Classes[w].Leaf
				if len(g) > 1 {
					several++
				}
				cost, ok := g[w]
				if !ok {
					// A path of a test eliminated where it does not
					// meet it lies in a class on both sides.
					for c, v := range g {
						if slices.Contains(d.Classes[c].Leaf.Paths, paths[k]) {
							w, cost, ok, leaf = c, v, true, d.Classes[c].Leaf
						}
					}
				}
				switch {
				case !ok:
					t.Errorf("frame %d: the Python says class %v, the interpreter's path is in class %d (%s)", k, keys(g), w, leaf.Value)
				case cost != leaf.Value.Const:
					t.Errorf("frame %d, class %d: the Python's cost %g, the class's %s", k, w, cost, leaf.Value)
				}
			}
			if checked < len(pkts)/2 {
				t.Errorf("only %d of %d packets checked", checked, len(pkts))
			}
			t.Logf("%d classes at resolution %g; %d frames checked, %d with several possible classes", len(d.Classes), r, checked, several)
		})
	}
}

func writePcap(t *testing.T, path string, pkts [][]byte) {
	t.Helper()
	var b bytes.Buffer
	w := pcapgo.NewWriter(&b)
	if err := w.WriteFileHeader(65535, layers.LinkTypeEthernet); err != nil {
		t.Fatal(err)
	}
	for _, p := range pkts {
		ci := gopacket.CaptureInfo{Timestamp: time.Unix(0, 0), CaptureLength: len(p), Length: len(p)}
		if err := w.WritePacket(ci, p); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// parseFrames reads "frame N: class A|B cost X|Y" lines: per frame, the
// classes and their costs.
func parseFrames(t *testing.T, out string) map[int]map[int]float64 {
	t.Helper()
	got := map[int]map[int]float64{}
	for _, line := range strings.Split(out, "\n") {
		var k int
		var ids, costs string
		if n, _ := fmt.Sscanf(line, "frame %d: class %s cost %s", &k, &ids, &costs); n != 3 {
			if strings.Contains(line, "error") {
				t.Errorf("python: %s", line)
			}
			continue
		}
		cs := strings.Split(costs, "|")
		m := map[int]float64{}
		for i, s := range strings.Split(ids, "|") {
			id, err1 := strconv.Atoi(s)
			v, err2 := strconv.ParseFloat(cs[i], 64)
			if err1 != nil || err2 != nil {
				t.Fatalf("bad line %q", line)
			}
			m[id] = v
		}
		got[k] = m
	}
	return got
}

func keys(m map[int]float64) []int {
	var out []int
	for k := range m {
		out = append(out, k)
	}
	return out
}

// walkPackets are frames whose headers parsers walk: up to three VLAN
// tags, then IPv6 with up to four extension headers of various kinds and
// lengths, or IPv4 with options, then TCP or UDP.
func walkPackets(n int) [][]byte {
	var out [][]byte
	for i := range n {
		pkt := make([]byte, 12, 200)
		for j := range pkt {
			pkt[j] = byte(i + j)
		}
		for range (i / 20) % 3 { // the first 20 untagged: their walks reach deepest
			pkt = append(pkt, 0x81, 0x00, 0, byte(i))
		}
		l4 := []byte{6, 17}[i%2]
		if i%5 == 4 {
			ihl := 5 + i%3
			pkt = append(pkt, 0x08, 0x00, byte(0x40|ihl), 0, 0, byte(4*ihl+20), 0, 0, 0, 0, 64, l4, 0, 0,
				10, 0, 0, 1, 10, 0, 0, 2)
			pkt = append(pkt, make([]byte, 4*ihl-20)...)
		} else {
			// Chains of options (0, 43, 60), fragment (44) and
			// authentication (51) headers.
			exts := i % 5
			kinds := [][]byte{{0, 43, 60, 60}, {0, 44, 51, 43}, {51, 44, 44, 60}, {44, 0, 51, 51}}[(i/5)%4]
			next := l4
			if exts > 0 {
				next = kinds[0]
			}
			pkt = append(pkt, 0x86, 0xdd, 0x60, 0, 0, 0, 0, 64, next, 64)
			pkt = append(pkt, make([]byte, 32)...)
			for e := range exts {
				kind := kinds[e]
				next = l4
				if e < exts-1 {
					next = kinds[e+1]
				}
				hl := (i + e) % 3
				size := 8 * (hl + 1)
				switch kind {
				case 44:
					hl, size = 0, 8
				case 51:
					hl = 2 + 2*(hl%2) // a multiple of 8 bytes, as IPv6 wants
					size = 4 * (hl + 2)
				}
				pkt = append(pkt, next, byte(hl))
				pkt = append(pkt, make([]byte, size-2)...)
			}
		}
		pkt = append(pkt, 0x30, 0x39, 0x01, 0xbb, 0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x02, 2, 0, 0, 0, 0, 0)
		out = append(out, pkt)
	}
	return out
}

// TestRenderPrecedence: an offset's variable part and its constant are
// joined with the parentheses Python needs, and names bind as operators.
func TestRenderPrecedence(t *testing.T) {
	b59 := &expr{op: opPkt, w: 8, offs: []int{59}}
	shl := &expr{op: "<<", w: 64, args: []*expr{b59, constExpr(64, 3)}}
	walk := &expr{op: opPkt, w: 8, offs: []int{66}, sym: shl}
	x, y := varExpr(64, "x"), varExpr(64, "y")
	for _, c := range []struct {
		e    *expr
		want string
	}{
		{walk, "pkt[(pkt[59] << 3) + 66]"},
		{&expr{op: "==", w: 1, args: []*expr{walk, constExpr(8, 0)}}, "pkt[(pkt[59] << 3) + 66] == 0"},
		{&expr{op: "+", w: 64, args: []*expr{shl, constExpr(64, 66)}}, "(pkt[59] << 3) + 66"},
		{&expr{op: "&", w: 64, args: []*expr{shl, constExpr(64, 60)}}, "pkt[59] << 3 & 60"},
		{&expr{op: "<<", w: 64, args: []*expr{&expr{op: "&", w: 64, args: []*expr{x, constExpr(64, 15)}}, constExpr(64, 2)}}, "(x & 15) << 2"},
		{&expr{op: "-", w: 64, args: []*expr{x, &expr{op: "-", w: 64, args: []*expr{y, constExpr(64, 1)}}}}, "x - (y - 1)"},
		{&expr{op: "==", w: 1, args: []*expr{&expr{op: "==", w: 1, args: []*expr{x, y}}, constExpr(1, 0)}}, "(x == y) == False"},
		{negate(&expr{op: "or", w: 1, args: []*expr{varExpr(1, "a"), varExpr(1, "b")}}), "not (a or b)"},
		{&expr{op: "and", w: 1, args: []*expr{varExpr(1, "a"), &expr{op: "or", w: 1, args: []*expr{varExpr(1, "b"), varExpr(1, "c")}}}}, "a and (b or c)"},
	} {
		if got := render(c.e, plainNames{}); got != c.want {
			t.Errorf("got %s, want %s", got, c.want)
		}
	}
	if p := textPrec("pkt.ip.ihl*4"); p != prec["*"] {
		t.Errorf("pkt.ip.ihl*4 binds as %d, want %d", p, prec["*"])
	}
	if p := textPrec("not pkt.tcp.syn"); p != 3 {
		t.Errorf("not binds as %d, want 3", p)
	}
}

// TestConditionLength: the conditions of xdpfilt_alw_all and Katran's
// balancer_ingress_v4 stay short once header walks are named (at most
// 120 characters), at the default resolution and in the exact view (of
// every path through 14 or 18 decisions, deep enough for walks through
// fragment and authentication headers: the full exact exploration takes
// minutes).
func TestConditionLength(t *testing.T) {
	katran := testobj.Built(t, "test_xdp_noinline")
	alw := filepath.Join(testobj.LibXDPDir, "xdpfilt_alw_all.o")
	for _, c := range []struct {
		name, file, prog string
		depth            int
	}{
		{"xdpfilt_alw_all", alw, "", 0}, {"xdpfilt_alw_all_depth14", alw, "", 14},
		{"xdpfilt_alw_all_depth18", alw, "", 18},
		{"katran_v4", katran, "balancer_ingress_v4", 0}, {"katran_v4_depth14", katran, "balancer_ingress_v4", 14},
		{"katran_v6", katran, "balancer_ingress_v6", 0}, {"katran_v6_depth14", katran, "balancer_ingress_v6", 14},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, it, r := coarseInterface(t, c.file, c.prog, c.depth)
			var b bytes.Buffer
			if err := it.Python(&b, it.View(r)); err != nil {
				t.Fatal(err)
			}
			longest := ""
			for _, line := range strings.Split(b.String(), "\n") {
				line = strings.TrimSpace(line)
				if i := strings.Index(line, ":  # "); i >= 0 {
					line = line[:i+1]
				}
				if (strings.HasPrefix(line, "if ") || strings.HasPrefix(line, "elif ")) && len(line) > len(longest) {
					longest = line
				}
			}
			// About 120: Katran v6's flow key, four members with a pair
			// of IPv6 addresses, is the longest at 125.
			if len(longest) > 125 {
				t.Errorf("%d characters: %s", len(longest), longest)
			}
			t.Logf("longest condition, %d characters: %s", len(longest), longest)
		})
	}
}
