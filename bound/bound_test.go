package bound

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/dpperf/dpperf/bpfprog"
	"github.com/dpperf/dpperf/cfg"
	"github.com/dpperf/dpperf/internal/testobj"
	"github.com/dpperf/dpperf/target"
)

func mustTarget(t testing.TB, name string) *target.Target {
	t.Helper()
	tg, err := target.Load(name)
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

func analyze(t testing.TB, p *bpfprog.Program, tgt string, k int) *Result {
	t.Helper()
	g, err := cfg.Build(p, cfg.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := Naive(context.Background(), Cost(g, mustTarget(t, tgt)), k)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestHandCheckedCycles prices a small program by hand under the class
// model of nfp-agilio-cx-fwhash.
//
//	block 1: r0 = 2             alu64        3
//	         r2 = ctx->data_end  ctx load     2
//	         r1 = ctx->data      ctx load     2
//	         r3 = *(u8 *)(r1+0)  packet load  4 + blocking max(3, 16-7) = 13
//	         r4 = r1             alu64        3
//	         r4 += 14            alu64        3
//	         if r4 > r2 goto 3   cond64       5, then taken 4 / not taken 1
//	block 2: r5 = *(u8 *)(r1+12) packet load  4 + max(3, 16-(3+3+5+1)) = 8
//	         exit                             4
//	block 3: r0 = 1             alu64        3
//	         exit                             4
//
// Per packet 224 (hiding no latency: the firmware may access memory right
// before the program starts). Block 1 costs 31; not taken: 224+31+1+12 =
// 268; taken: 224+31+4+7 = 266.
func TestHandCheckedCycles(t *testing.T) {
	insns := asm.Instructions{
		asm.Mov.Imm(asm.R0, 2),
		asm.LoadMem(asm.R2, asm.R1, 4, asm.Word),
		asm.LoadMem(asm.R1, asm.R1, 0, asm.Word),
		asm.LoadMem(asm.R3, asm.R1, 0, asm.Byte),
		asm.Mov.Reg(asm.R4, asm.R1),
		asm.Add.Imm(asm.R4, 14),
		asm.JGT.Reg(asm.R4, asm.R2, ""),
		asm.LoadMem(asm.R5, asm.R1, 12, asm.Byte),
		asm.Return(),
		asm.Mov.Imm(asm.R0, 1),
		asm.Return(),
	}
	insns[6].Offset = 2 // jump to block 3 by raw offset
	p, err := bpfprog.New("hand", ebpf.XDP, insns, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := analyze(t, p, "nfp-agilio-cx-fwhash", 5)
	if len(r.Paths) != 2 {
		t.Fatalf("%d paths, want 2", len(r.Paths))
	}
	for i, want := range []float64{268, 266} {
		if got := r.Paths[i].Cost["cores"]; got != want {
			t.Errorf("path %d: %g cycles, want %g", i+1, got, want)
		}
		if got := r.Paths[i].Cost["dram"]; got != 0 {
			t.Errorf("path %d: %g DRAM cycles, want 0", i+1, got)
		}
	}
	if got, want := r.Paths[0].PacketRate, 40e9/268; math.Abs(got-want) > 1e-6*want {
		t.Errorf("path rate %g, want %g", got, want)
	}
	// 147.6 Mpkt/s exceeds the MAC limit, which then is the bound.
	if r.Bound.PacketRate != 54.4e6 || r.Bound.Bottleneck != "packet_rate_limit" {
		t.Errorf("bound %g (%s), want the 54.4 Mpkt/s MAC limit", r.Bound.PacketRate, r.Bound.Bottleneck)
	}
}

// TestCountMinKnownAnswer checks the document's DRAM-bound case: N atomic
// increments per packet are bound by the DRAM engine at
// 800e6 / (N × 3.2198) packets/s; for N = 10 that is 11.93 Gbit/s at 60 B.
func TestCountMinKnownAnswer(t *testing.T) {
	const n = 10
	insns := asm.Instructions{
		asm.LoadMapPtr(asm.R1, 0).WithReference("sketch"),
		asm.Mov.Reg(asm.R2, asm.R10),
		asm.Add.Imm(asm.R2, -4),
		asm.StoreImm(asm.R10, -4, 0, asm.Word),
		asm.FnMapLookupElem.Call(),
		asm.JEq.Imm(asm.R0, 0, ""),
	}
	insns[5].Offset = 2*n + 1
	for i := 0; i < n; i++ {
		insns = append(insns, asm.Mov.Imm(asm.R1, 1), asm.StoreXAdd(asm.R0, asm.R1, asm.DWord))
	}
	insns = append(insns, asm.Mov.Imm(asm.R0, 2), asm.Return())
	maps := map[string]*bpfprog.Map{"sketch": {Name: "sketch", Type: ebpf.Array, KeySize: 4, ValueSize: 8, MaxEntries: 1}}
	p, err := bpfprog.New("cms", ebpf.XDP, insns, maps)
	if err != nil {
		t.Fatal(err)
	}
	r := analyze(t, p, "nfp-agilio-cx", 1)
	if r.Bound.Bottleneck != "dram" {
		t.Fatalf("bottleneck %s, want dram", r.Bound.Bottleneck)
	}
	want := 800e6 / (n * 3.219818925010342) * 60 * 8
	if math.Abs(r.Bound.BitRate-want) > 1e-9*want {
		t.Fatalf("bit rate %g, want %g", r.Bound.BitRate, want)
	}
	if math.Abs(r.Bound.BitRate-11.93e9) > 0.01e9 {
		t.Fatalf("bit rate %g, want 11.93 Gbit/s", r.Bound.BitRate)
	}
}

// TestFig2NaivePathIsImpossible: the slowest path of the document's Figure 2
// program is the one through both the IPv4 counter and the IPv6 loop.
func TestFig2NaivePathIsImpossible(t *testing.T) {
	p, err := bpfprog.LoadFile(testobj.Built(t, "fig2"), "")
	if err != nil {
		t.Fatal(err)
	}
	r := analyze(t, p, "nfp-agilio-cx", 4)
	text := ""
	for _, l := range r.Paths[0].Lines {
		text += l.Text + "\n"
	}
	for _, want := range []string{"__sync_fetch_and_add(c, 1)", "acc += i", "ETH_P_IPV6"} {
		if !strings.Contains(text, want) {
			t.Errorf("naive path lacks %q:\n%s", want, text)
		}
	}
	if r.Paths[0].Cost["dram"] == 0 {
		t.Error("naive path has no DRAM cost, want the IPv4 atomic increment")
	}
	// Paths come out slowest first.
	for i := 1; i < len(r.Paths); i++ {
		if r.Paths[i].PacketRate < r.Paths[i-1].PacketRate {
			t.Errorf("path %d is slower than path %d", i+1, i)
		}
	}
}

// TestOrderedMatchesBruteForce: on real programs, the ordered enumeration
// yields every path exactly once, sorted by packet rate.
func TestOrderedMatchesBruteForce(t *testing.T) {
	for _, name := range []string{"fig2", "parser", "counter", "call", "loop"} {
		t.Run(name, func(t *testing.T) {
			g := graphOf(t, name)
			c := Cost(g, mustTarget(t, "nfp-agilio-cx"))
			o, err := NewOrdered(c)
			if err != nil {
				t.Fatal(err)
			}
			var rates []float64
			for {
				path, ok := o.Next()
				if !ok {
					break
				}
				rates = append(rates, path.Rate)
			}
			if want := countPaths(g); len(rates) != want {
				t.Fatalf("%d paths, want %d", len(rates), want)
			}
			for i := 1; i < len(rates); i++ {
				if rates[i] < rates[i-1] {
					t.Fatalf("path %d (%g pkt/s) slower than path %d (%g pkt/s)", i+1, rates[i], i, rates[i-1])
				}
			}
		})
	}
}

func countPaths(g *cfg.Graph) int {
	n := make([]int, len(g.Nodes))
	n[g.Source] = 1
	for _, e := range g.Edges { // topological order
		n[e.To] += n[e.From]
	}
	return n[g.Sink]
}

// TestExactCostNeverExceedsEdgeCost: the exact price of a path counts the
// latency it hides along itself, so it is at most the over-estimate the
// enumeration orders by, on every path of every example.
func TestExactCostNeverExceedsEdgeCost(t *testing.T) {
	tg := mustTarget(t, "nfp-agilio-cx")
	for _, name := range []string{"fig2", "counter", "parser", "loop", "call"} {
		p, err := bpfprog.LoadFile(testobj.Built(t, name), "")
		if err != nil {
			t.Fatal(err)
		}
		g, err := cfg.Build(p, cfg.Options{})
		if err != nil {
			t.Fatal(err)
		}
		c := Cost(g, tg)
		o, err := NewOrdered(c)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 2000; i++ {
			p, ok := o.Next()
			if !ok {
				break
			}
			exact := c.ExactCost(p.Edges)
			for k := range exact {
				if exact[k] > p.Cost[k]+1e-9 {
					t.Fatalf("%s path %d: exact %s cost %g above the enumeration's %g", name, i, tg.Components[k].Name, exact[k], p.Cost[k])
				}
			}
		}
	}
}

// TestPCVAssumptionKnownAnswer: with traversals=8 and evicted=1 every edge
// costs what it cost with the PCVs at 0, plus, for each map lookup, update
// or delete on a hash map in its source block, 8 traversals at the x86-64
// table's 4 ns, and for each update of an LRU map one eviction at 60 ns.
func TestPCVAssumptionKnownAnswer(t *testing.T) {
	p, err := bpfprog.LoadFile(testobj.Built(t, "flowtable"), "")
	if err != nil {
		t.Fatal(err)
	}
	g, err := cfg.Build(p, cfg.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tg := mustTarget(t, "x86-64")
	base := Cost(g, tg)
	with := CostWith(g, tg, map[string]float64{"traversals": 8, "evicted": 1})
	hashy := map[ebpf.MapType]bool{ebpf.Hash: true, ebpf.LRUHash: true, ebpf.PerCPUHash: true, ebpf.LRUCPUHash: true}
	lru := map[ebpf.MapType]bool{ebpf.LRUHash: true, ebpf.LRUCPUHash: true}
	ops := 0
	for ei, e := range g.Edges {
		want := 0.0
		for _, op := range g.Nodes[e.From].Ops {
			if op.Kind != cfg.OpHelper || op.Map < 0 || !hashy[g.Maps[op.Map].Type] {
				continue
			}
			switch op.Helper {
			case asm.FnMapUpdateElem:
				if lru[g.Maps[op.Map].Type] {
					want += 60
				}
				fallthrough
			case asm.FnMapLookupElem, asm.FnMapDeleteElem:
				want += 8 * 4
				ops++
			}
		}
		if got := with.Edge[ei][0] - base.Edge[ei][0]; math.Abs(got-want) > 1e-9 {
			t.Errorf("edge %d (%d -> %d): the assumption adds %g ns, want %g", ei, e.From, e.To, got, want)
		}
	}
	if ops == 0 || with.PCVOps == 0 || base.PCVOps != with.PCVOps {
		t.Fatalf("%d hash operations on edges, PCVOps %d and %d", ops, base.PCVOps, with.PCVOps)
	}
}

func TestParsePCV(t *testing.T) {
	got, err := ParsePCV("traversals=8, evicted=1")
	if err != nil || len(got) != 2 || got["traversals"] != 8 || got["evicted"] != 1 {
		t.Fatalf("got %v, %v", got, err)
	}
	if s := FormatPCV(got); s != "evicted=1,traversals=8" {
		t.Errorf("FormatPCV: %s", s)
	}
	for _, bad := range []string{"", "traversals", "trips=3", "traversals=-1", "traversals=x", "stages=1,stages=2", "evicted=NaN"} {
		if _, err := ParsePCV(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
