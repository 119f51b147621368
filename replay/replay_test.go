package replay

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/dpperf/dpperf/bpfprog"
	"github.com/dpperf/dpperf/cfg"
	"github.com/dpperf/dpperf/examples/interface/workload"
	"github.com/dpperf/dpperf/internal/fail"
	"github.com/dpperf/dpperf/internal/testobj"
	"github.com/dpperf/dpperf/interp"
	"github.com/dpperf/dpperf/replay/rootcause"
)

var mixedPcap = filepath.Join(testobj.Root(), "examples", "interface", "mixed.pcap")

func flowtable(t testing.TB) *bpfprog.Program {
	t.Helper()
	p, err := bpfprog.LoadFile(testobj.Built(t, "flowtable"), "")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// wantSignature is what flowtable does with each kind of generated packet.
var wantSignature = map[string]string{
	workload.TCPSyn:   "PASS flows.lookup:miss flows.update classes.lookup:hit",
	workload.TCPEst:   "PASS flows.lookup:hit classes.lookup:hit",
	workload.TCPFin:   "PASS flows.lookup:hit flows.delete classes.lookup:hit",
	workload.TCPStray: "DROP flows.lookup:miss classes.lookup:hit",
	workload.ICMP:     "PASS classes.lookup:hit",
	workload.ARP:      "PASS classes.lookup:hit",
}

// TestReplayMixed replays the example capture through flowtable and checks
// each packet's run against what its kind must do: SYNs insert their
// flow, later packets hit it, FINs remove it, strays drop, runts do not
// run. Every run maps onto the graph with its instruction count.
func TestReplayMixed(t *testing.T) {
	p := flowtable(t)
	g, err := cfg.Build(p, cfg.Options{})
	if err != nil {
		t.Fatal(err)
	}
	gen := workload.Generate(workload.Config{Seed: 1})
	udpSeen := map[string]bool{}
	progress := 0
	sum, err := File(context.Background(), p, mixedPcap, Options{Graph: g, ProgressEvery: 100, Progress: func(Progress) { progress++ }},
		func(pkt *Packet) error {
			w := gen[pkt.Index]
			if !bytes.Equal(pkt.Data, w.Data) || !pkt.Time.Equal(w.Time) || pkt.WireLen != len(w.Data) {
				t.Fatalf("packet %d: read back other bytes or time", pkt.Index)
			}
			if len(w.Data) < 14 {
				if pkt.Err == nil || pkt.Result != nil {
					t.Errorf("packet %d: runt of %d bytes ran", pkt.Index, len(w.Data))
				}
				return nil
			}
			if pkt.Err != nil {
				t.Fatalf("packet %d (%s): %v", pkt.Index, w.Kind, pkt.Err)
			}
			static := 0
			for _, ei := range pkt.Edges {
				first, last := g.Insns(g.Edges[ei].To)
				static += last - first + 1
			}
			if static != pkt.Result.Count {
				t.Errorf("packet %d: graph path of %d instructions, run of %d", pkt.Index, static, pkt.Result.Count)
			}
			sig := Signature(pkt.Result)
			want := wantSignature[w.Kind]
			switch w.Kind {
			case workload.UDP:
				flow := flowKey(w)
				want = "PASS flows.lookup:hit classes.lookup:hit"
				if !udpSeen[flow] {
					want = wantSignature[workload.TCPSyn]
				}
				udpSeen[flow] = true
			case workload.Malformed:
				want = "DROP classes.lookup:hit"
			}
			if sig != want {
				t.Errorf("packet %d (%s): %q, want %q", pkt.Index, w.Kind, sig, want)
			}
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	runts := 0
	for _, w := range gen {
		if len(w.Data) < 14 {
			runts++
		}
	}
	if sum.Packets != len(gen) || sum.Failed != runts || sum.Ran != len(gen)-runts {
		t.Errorf("summary %+v, want %d packets, %d runts", sum, len(gen), runts)
	}
	if progress != len(gen)/100+1 {
		t.Errorf("%d progress reports, want %d", progress, len(gen)/100+1)
	}
	if n := len(sum.Maps.State().Maps["flows"].Entries); n != 40 {
		t.Errorf("%d flows left, want the 40 UDP flows (TCP flows closed)", n)
	}
}

// flowKey names a UDP packet's 5-tuple (IPv4 or IPv6).
func flowKey(w workload.Packet) string {
	pk := gopacket.NewPacket(w.Data, layers.LayerTypeEthernet, gopacket.Default)
	return pk.NetworkLayer().NetworkFlow().String() + " " + pk.TransportLayer().TransportFlow().String()
}

// TestSnapshotBefore: the state recorded before a packet, given as the
// starting state, makes a fresh replay of that packet take the same path.
func TestSnapshotBefore(t *testing.T) {
	p := flowtable(t)
	picks := map[int]bool{3: true, 50: true, 200: true, 400: true}
	var got []*Packet
	_, err := File(context.Background(), p, mixedPcap, Options{SnapshotBefore: func(i int) bool { return picks[i] }},
		func(pkt *Packet) error {
			if picks[pkt.Index] {
				got = append(got, pkt)
			} else if pkt.Before != nil {
				t.Fatalf("packet %d: snapshot not asked for", pkt.Index)
			}
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(picks) {
		t.Fatalf("%d snapshots, want %d", len(got), len(picks))
	}
	for _, pkt := range got {
		r, err := New(p, Options{State: pkt.Before})
		if err != nil {
			t.Fatal(err)
		}
		again := r.Step(Frame{Data: pkt.Data})
		if (again.Err == nil) != (pkt.Err == nil) || pkt.Result != nil && !slices.Equal(again.Result.Path, pkt.Result.Path) {
			t.Errorf("packet %d: another path from its snapshot", pkt.Index)
		}
	}
}

// TestPcapng: the same frames written as pcapng replay the same way.
func TestPcapng(t *testing.T) {
	gen := workload.Generate(workload.Config{Seed: 3})
	var buf bytes.Buffer
	ng, err := pcapgo.NewNgWriter(&buf, layers.LinkTypeEthernet)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range gen {
		if err := ng.WritePacket(gopacket.CaptureInfo{Timestamp: w.Time, CaptureLength: len(w.Data), Length: len(w.Data) + 4}, w.Data); err != nil {
			t.Fatal(err)
		}
	}
	ng.Flush()
	rd, err := NewReader(&buf, "mixed.pcapng")
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range gen {
		f, err := rd.Next()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(f.Data, w.Data) || !f.Time.Equal(w.Time) || f.WireLen != len(w.Data)+4 {
			t.Fatalf("frame %d differs", i)
		}
	}
	if _, err := rd.Next(); err == nil {
		t.Fatal("no end after the last frame")
	}
}

// TestBadCaptures: wrong files are one-line input errors naming the file.
func TestBadCaptures(t *testing.T) {
	var raw bytes.Buffer
	w := pcapgo.NewWriter(&raw)
	w.WriteFileHeader(65535, layers.LinkTypeRaw)
	w.WritePacket(gopacket.CaptureInfo{CaptureLength: 20, Length: 20}, make([]byte, 20))
	good, err := os.ReadFile(mixedPcap)
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{
		"empty":     nil,
		"text":      []byte("hello, world\n"),
		"raw-ip":    raw.Bytes(),
		"truncated": good[:24+16+10],
		"bad-len":   append(slices.Clone(good[:24]), 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0x7f, 1, 0, 0, 0),
	} {
		t.Run(name, func(t *testing.T) {
			file := name + ".pcap"
			_, err := readAll(data, file)
			if err == nil {
				t.Fatal("no error")
			}
			if fail.ExitCode(err) != fail.ExitInput || !strings.HasPrefix(err.Error(), file+": ") || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q (exit %d), want a one-line input error naming %s", err, fail.ExitCode(err), file)
			}
		})
	}
}

func readAll(data []byte, file string) (int, error) {
	rd, err := NewReader(bytes.NewReader(data), file)
	if err != nil {
		return 0, err
	}
	for n := 0; n < 1<<16; n++ {
		if _, err := rd.Next(); err != nil {
			if errors.Is(err, io.EOF) {
				return n, nil
			}
			return n, err
		}
	}
	return 1 << 16, nil
}

// TestCancel: a cancelled context stops the replay early.
func TestCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sum, err := File(ctx, flowtable(t), mixedPcap, Options{}, func(pkt *Packet) error {
		if pkt.Index == 10 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) || sum.Packets > 64 {
		t.Fatalf("err %v after %d packets, want cancelled within 64", err, sum.Packets)
	}
}

// TestRepresentatives: each class gets its draw, spread over the trace,
// and each representative run again from its state takes the path it took.
func TestRepresentatives(t *testing.T) {
	p := flowtable(t)
	reps, err := Representatives(context.Background(), p, mixedPcap, Options{}, 3, func(pkt *Packet) string { return Signature(pkt.Result) })
	if err != nil {
		t.Fatal(err)
	}
	per := map[string]int{}
	for _, r := range reps {
		per[r.Class]++
		again, err := New(p, Options{State: r.State})
		if err != nil {
			t.Fatal(err)
		}
		if pkt := again.Step(Frame{Data: r.Packet}); pkt.Err != nil || !slices.Equal(pkt.Result.Path, r.Result.Path) {
			t.Errorf("class %s packet %d: another run from its state", r.Class, r.Index)
		}
	}
	if len(per) != len(wantSignature) {
		t.Errorf("classes %v, want %d", per, len(wantSignature))
	}
	for c, n := range per {
		if n != 3 {
			t.Errorf("class %s: %d representatives, want 3", c, n)
		}
	}
	if last := slices.MaxFunc(reps, func(a, b Rep) int { return a.Index - b.Index }); last.Index < 500 {
		t.Errorf("latest representative at %d: the draw keeps to the start", last.Index)
	}
}

// TestFeatures: flowtable's new-flow packets are its costliest; ranked by
// instructions, the insert explains the slowest 10%.
func TestFeatures(t *testing.T) {
	var samples []rootcause.Sample
	_, err := File(context.Background(), flowtable(t), mixedPcap, Options{}, func(pkt *Packet) error {
		if pkt.Result != nil {
			samples = append(samples, Sample(pkt.Result, float64(pkt.Result.Count)))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	b, n := Features(&interp.Result{Verdict: 2, Calls: []interp.Call{{Map: "flows", Op: "lookup", Ret: 1, PCV: []interp.PCV{{Name: "traversals", Value: 2}}}}})
	if !b["verdict=PASS"] || !b["flows.lookup:hit"] || n["flows.lookup.traversals"] != 2 || len(b) != 3 || len(n) != 1 {
		t.Errorf("features %v %v", b, n)
	}
	tab, err := rootcause.Rank(samples, rootcause.Slow{Percentile: 90})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range tab.Rows[:4] {
		t.Logf("%-28s %.2f %s", r.Name, r.Score, r.Explanation)
	}
	if top := tab.Rows[0].Name; top != "flows.update" && top != "flows.delete" {
		t.Errorf("first row %s, want the insert or the delete", top)
	}
}

// TestMissingFile: a capture that cannot be opened is an input error
// naming it.
func TestMissingFile(t *testing.T) {
	_, err := File(context.Background(), flowtable(t), "no/such.pcap", Options{}, func(*Packet) error { return nil })
	if fail.ExitCode(err) != fail.ExitInput || !strings.HasPrefix(err.Error(), "no/such.pcap: ") {
		t.Errorf("error %v", err)
	}
}
