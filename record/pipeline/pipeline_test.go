package pipeline

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/dpperf/dpperf/record"
	"github.com/dpperf/dpperf/record/analyze"
	"github.com/dpperf/dpperf/record/trace"
)

// recordRun runs the pipeline under the recorder and analyzes the trace.
func recordRun(t *testing.T, cfg Config) (Result, *analyze.Report) {
	t.Helper()
	rc, err := record.ParseConfig([]byte("period: 10ms\ntarget_root: " + t.TempDir() +
		"\nsnap_len: 64\npolicies:\n  - label: pipeline/router\n    buffer: 64MiB\n    backends: [ctf, pcapng]\ndefault_policy:\n  backends: [ctf]\n"))
	if err != nil {
		t.Fatal(err)
	}
	tr := trace.New()
	rec := record.New(tr, rc, nil)
	if _, err := rec.Enable(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	stop := make(chan struct{})
	go func() {
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				_ = rec.Drain(false)
			}
		}
	}()
	res, err := Run(ctx, tr, cfg)
	close(stop)
	st, derr := rec.Disable()
	if err != nil || derr != nil {
		t.Fatal(err, derr)
	}
	rep, err := analyze.Analyze(st.Dir)
	if err != nil {
		t.Fatal(err)
	}
	return res, rep
}

func rpcCount(r *analyze.Report) uint64 {
	for _, x := range r.RPCs {
		if x.Caller == LabelRouter && x.Callee == LabelTimer && x.Name == "trigger_once" {
			return x.Count
		}
	}
	return 0
}

func TestEagerTimeoutShowsInTrace(t *testing.T) {
	const n = 20000
	eager, er := recordRun(t, Config{Packets: n, Routes: 4, EagerTimeout: true})
	lazy, lr := recordRun(t, Config{Packets: n, Routes: 4})
	if eager.Received != n || lazy.Received != n {
		t.Fatalf("received %d and %d of %d", eager.Received, lazy.Received, n)
	}
	var discarded uint64
	for _, s := range append(er.Streams, lr.Streams...) {
		discarded += s.Discarded
	}
	// The planted cost: one trigger_once RPC per packet, against one per
	// route. Events dropped by a full buffer (a heavily loaded machine) can
	// only lower the count seen in the trace.
	if got := rpcCount(er); got > n || got+discarded < n || eager.TimerRPCs != n {
		t.Errorf("eager: trace shows %d trigger_once RPCs, timer served %d, want %d", got, eager.TimerRPCs, n)
	}
	if got := rpcCount(lr); got != 4 || lazy.TimerRPCs != 4 {
		t.Errorf("lazy: trace shows %d trigger_once RPCs, timer served %d, want 4", got, lazy.TimerRPCs)
	}
	for _, r := range []*analyze.Report{er, lr} {
		var route *analyze.Durations
		for i := range r.Checkpoints {
			if r.Checkpoints[i].Label == LabelRouter && r.Checkpoints[i].Name == "route" {
				route = &r.Checkpoints[i]
			}
		}
		if route == nil || route.Count != n || route.Unpaired != 0 {
			t.Errorf("route checkpoints %+v", route)
		}
		var submit *analyze.QueueFill
		for i := range r.Queues {
			if r.Queues[i].Name == "submit" {
				submit = &r.Queues[i]
			}
		}
		if submit == nil || submit.Capacity != 1024 || submit.Samples == 0 {
			t.Errorf("submit queue fill %+v", submit)
		}
	}
}

func TestRouterPacketsInPcapng(t *testing.T) {
	ts, err := exec.LookPath("tshark")
	if err != nil {
		t.Fatal("tshark is required (scripts/setup.sh installs it)")
	}
	_, r := recordRun(t, Config{Packets: 50, Routes: 2})
	out, err := exec.Command(ts, "-r", filepath.Join(r.Dir, "pipeline/router.pcapng"), "-T", "fields", "-E", "separator=,",
		"-e", "frame.interface_name", "-e", "ip.ttl", "-e", "udp.dstport", "-e", "ip.checksum.status", "-o", "ip.check_checksum:TRUE").Output()
	if err != nil {
		t.Fatalf("tshark: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 100 {
		t.Fatalf("tshark read %d packets, want 100", len(lines))
	}
	for i, l := range lines {
		want := "uplink_in,64,"
		if i%2 == 1 {
			want = "downlink_out,63,"
		}
		if !strings.HasPrefix(l, want) || !strings.HasSuffix(l, ",1") { // 1: checksum good
			t.Fatalf("packet %d: %q, want %s... with a good checksum", i, l, want)
		}
	}
}

func TestDecrementTTLChecksum(t *testing.T) {
	frames, err := buildFrames(3)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range frames {
		for i := 0; i < 63; i++ {
			decrementTTL(f)
			p := gopacket.NewPacket(f, layers.LayerTypeEthernet, gopacket.Default)
			ip := p.Layer(layers.LayerTypeIPv4).(*layers.IPv4)
			want := ip.Checksum
			ip.Checksum = 0
			buf := gopacket.NewSerializeBuffer()
			if err := ip.SerializeTo(buf, gopacket.SerializeOptions{ComputeChecksums: true}); err != nil {
				t.Fatal(err)
			}
			if got := ip.Checksum; got != want {
				t.Fatalf("TTL %d: incremental checksum %#x, full %#x", ip.TTL, want, got)
			}
		}
	}
}
