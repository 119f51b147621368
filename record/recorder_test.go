package record

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dpperf/dpperf/record/trace"
)

// babeltrace runs babeltrace2 on dir and returns its event lines by event
// name, and its other lines (warnings).
func babeltrace(t *testing.T, dir string) (map[string][]string, []string) {
	t.Helper()
	bt, err := exec.LookPath("babeltrace2")
	if err != nil {
		t.Fatal("babeltrace2 is required (scripts/setup.sh installs it)")
	}
	// Events come on stdout, warnings (discarded events) on stderr: kept
	// apart, as a warning written while stdout's buffer holds half a line
	// would otherwise land inside an event's line.
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bt, dir)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("babeltrace2 %s: %v\n%.2000s", dir, err, stderr.String())
	}
	out := stdout.Bytes()
	events := map[string][]string{}
	var other []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		// [time] (+delta) Name: { context }, { fields }
		if i := strings.Index(l, ") "); strings.HasPrefix(l, "[") && i > 0 {
			rest := l[i+2:]
			if j := strings.Index(rest, ": "); j > 0 {
				events[rest[:j]] = append(events[rest[:j]], rest[j+2:])
				continue
			}
		}
		other = append(other, l)
	}
	if e := strings.TrimSpace(stderr.String()); e != "" {
		other = append(other, strings.Split(e, "\n")...)
	}
	return events, other
}

// tshark returns the interface name of every packet in a pcapng file.
func tshark(t *testing.T, path string, fields ...string) []string {
	t.Helper()
	ts, err := exec.LookPath("tshark")
	if err != nil {
		t.Fatal("tshark is required (scripts/setup.sh installs it)")
	}
	args := []string{"-r", path, "-T", "fields", "-E", "separator=,"}
	for _, f := range fields {
		args = append(args, "-e", f)
	}
	out, err := exec.Command(ts, args...).Output()
	if err != nil {
		t.Fatalf("tshark %s: %v\n%s", path, err, out)
	}
	s := strings.TrimSpace(string(out))
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func TestRecorderWritesLayout(t *testing.T) {
	root := t.TempDir()
	cfg, err := ParseConfig([]byte(`
period: 5ms
target_root: ` + root + `
snap_len: 64
policies:
  - label: pipeline/router
    backends: [ctf, pcapng]
  - label_prefix: pipeline/
    thread: tx
    buffer: 64KiB
`))
	if err != nil {
		t.Fatal(err)
	}
	tr := trace.New()
	router := tr.Worker("pipeline/router", "ep")
	ignored := tr.Worker("pipeline/sender", "main") // no policy matches
	rec := New(tr, cfg, nil)
	ctx, cancel := context.WithCancel(context.Background())
	type result struct {
		st  Stats
		err error
	}
	done := make(chan result)
	go func() { st, err := rec.Run(ctx); done <- result{st, err} }()
	for !router.Enabled() {
		time.Sleep(time.Millisecond)
	}
	tx := tr.Worker("pipeline/sender", "tx") // registered while recording
	if !tx.Enabled() || ignored.Enabled() {
		t.Fatalf("tx enabled %v, main enabled %v", tx.Enabled(), ignored.Enabled())
	}
	frame := make([]byte, 200)
	for i := 0; i < 3000; i++ {
		s := router.Start("route", uint32(i))
		if i%100 == 0 {
			router.Packet("uplink", trace.In, frame)
			router.Packet("downlink", trace.Out, frame)
			time.Sleep(time.Millisecond) // spread over several periods
		}
		s.End()
		tx.RPCCall("submit", "pipeline/router")
		tx.RPCReturned("submit", "pipeline/router")
		ignored.Checkpoint("lost", 0, 0, trace.Undef)
	}
	cancel()
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	if router.Enabled() || tx.Enabled() {
		t.Error("buffers still attached after Run returned")
	}
	dir := r.st.Dir
	for _, f := range []string{"pipeline/router/metadata", "pipeline/router/ep", "pipeline/sender/metadata", "pipeline/sender/tx", "pipeline/router.pcapng"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "pipeline/sender/main")); err == nil {
		t.Error("unmatched worker recorded")
	}
	events, other := babeltrace(t, dir)
	var discarded uint64
	for _, s := range r.st.Streams {
		discarded += s.Discarded
	}
	if got := len(events["Checkpoint"]); got != 6000 {
		t.Errorf("babeltrace2 read %d checkpoints, want 6000", got)
	}
	if got := len(events["Rpc_call"]) + len(events["Rpc_returned"]); uint64(got)+discarded != 6000 || got == 0 {
		t.Errorf("babeltrace2 read %d RPC events + %d discarded, want 6000", got, discarded)
	}
	if discarded > 0 && !strings.Contains(strings.Join(other, "\n"), "discarded") {
		t.Errorf("%d events discarded but babeltrace2 does not say so", discarded)
	}
	if !strings.Contains(events["Checkpoint"][1], `{ data = 0, addr = 0, type = 2, name = "route" }`) {
		t.Errorf("second checkpoint reads %s", events["Checkpoint"][1])
	}
	pk := tshark(t, filepath.Join(dir, "pipeline/router.pcapng"), "frame.interface_name", "frame.len", "frame.cap_len")
	if len(pk) != 60 {
		t.Fatalf("tshark read %d packets, want 60", len(pk))
	}
	for i, l := range pk {
		want := "uplink_in,200,64"
		if i%2 == 1 {
			want = "downlink_out,200,64"
		}
		if l != want {
			t.Fatalf("packet %d: %s, want %s", i, l, want)
		}
	}
}
