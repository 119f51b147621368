package record

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"testing"
	"time"

	"github.com/dpperf/dpperf/record/trace"
)

func TestMain(m *testing.M) {
	if root := os.Getenv("DPPERF_RECORD_CRASH_CHILD"); root != "" {
		crashChild(root)
		return
	}
	os.Exit(m.Run())
}

// crashChild records two busy workers until it is killed, or, with
// DPPERF_RECORD_CRASH_INTERRUPT set, until SIGINT stops the recording as
// Ctrl-C does; it prints the recording directory once several periods are
// on disk.
func crashChild(root string) {
	cfg, err := ParseConfig([]byte("period: 2ms\ntarget_root: " + root + "\npolicies:\n  - label_prefix: app/\n    backends: [ctf, pcapng]\n"))
	if err != nil {
		panic(err)
	}
	tr := trace.New()
	rec := New(tr, cfg, nil)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	stopped := make(chan error, 1)
	go func() { _, err := rec.Run(ctx); stopped <- err }()
	for i := 0; i < 2; i++ {
		w := tr.Worker("app/comp", fmt.Sprintf("worker%d", i))
		go func() {
			frame := make([]byte, 300)
			for n := uint32(0); ; n++ {
				if n%64 == 0 {
					time.Sleep(100 * time.Microsecond) // keep the trace small
				}
				s := w.Start("work", n)
				w.QueueFill("q", n%64, 64)
				if n%16 == 0 {
					w.Packet("eth0", trace.Direction(n/16%2), frame)
				}
				s.End()
			}
		}()
	}
	for {
		st := rec.Stats()
		var packets uint64
		for _, s := range st.Streams {
			packets += s.Packets
		}
		if packets >= 20 {
			fmt.Println(st.Dir)
			break
		}
		time.Sleep(time.Millisecond)
	}
	if os.Getenv("DPPERF_RECORD_CRASH_INTERRUPT") == "" {
		select {}
	}
	if err := <-stopped; err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println("stopped")
	os.Exit(0)
}

// startChild starts crashChild in a process of its own and returns it with
// the recording directory it printed.
func startChild(t *testing.T, interrupt bool) (*exec.Cmd, *bufio.Scanner, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "DPPERF_RECORD_CRASH_CHILD="+t.TempDir())
	if interrupt {
		cmd.Env = append(cmd.Env, "DPPERF_RECORD_CRASH_INTERRUPT=1")
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	if !sc.Scan() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatal("child printed no directory")
	}
	return cmd, sc, sc.Text()
}

// TestKilledRecordingReads kills a recording process with SIGKILL in the
// middle of its work; what it wrote must read in babeltrace2 and tshark.
func TestKilledRecordingReads(t *testing.T) {
	cmd, _, dir := startChild(t, false)
	time.Sleep(30 * time.Millisecond)
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	// A kill during a multi-page write may leave a partial packet at the
	// end of a file; Repair cuts it (it usually finds nothing to cut).
	cut, err := Repair(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("repair cut %v", cut)
	defer func(t0 time.Time) { t.Logf("reading took %v", time.Since(t0)) }(time.Now())
	events, _ := babeltrace(t, dir)
	if len(events["Checkpoint"]) < 100 || len(events["Queue_fill"]) < 50 {
		t.Errorf("babeltrace2 read %d checkpoints and %d queue fills", len(events["Checkpoint"]), len(events["Queue_fill"]))
	}
	checkTimestamps(t, dir)
	pk := tshark(t, filepath.Join(dir, "app/comp.pcapng"), "frame.interface_name")
	if len(pk) == 0 {
		t.Error("tshark read no packets")
	}
	for _, l := range pk {
		if l != "eth0_in" && l != "eth0_out" {
			t.Fatalf("packet on interface %q", l)
		}
	}
}

// TestInterruptedRecordingTimestamps stops a recording process with SIGINT
// while its workers write; the final drain must leave every event at its
// own time, with nothing for Repair to cut.
func TestInterruptedRecordingTimestamps(t *testing.T) {
	cmd, sc, dir := startChild(t, true)
	time.Sleep(30 * time.Millisecond)
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	stopped := sc.Scan() && sc.Text() == "stopped"
	if err := cmd.Wait(); err != nil || !stopped {
		t.Fatalf("child after SIGINT: %v (printed stopped: %v)", err, stopped)
	}
	cut, err := Repair(dir)
	if err != nil || len(cut) != 0 {
		t.Fatalf("Repair after a clean stop cut %v, %v", cut, err)
	}
	streams := checkTimestamps(t, dir)
	for key, s := range streams {
		if s.Events < 100 {
			t.Errorf("stream {%s}: %d events", key, s.Events)
		}
		t.Logf("stream {%s}: %d events in %d packets, longest run of one timestamp %d", key, s.Events, s.Packets, s.MaxRun)
	}
}

func TestRepairCutsPartialPacket(t *testing.T) {
	root := t.TempDir()
	cfg, _ := ParseConfig([]byte("period: 1s\ntarget_root: " + root + "\ndefault_policy:\n  backends: [ctf, pcapng]\n"))
	tr := trace.New()
	w := tr.Worker("c", "t")
	rec := New(tr, cfg, nil)
	dir, err := rec.Enable()
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 100; i++ {
		w.Checkpoint("x", uint32(i), 0, trace.Undef)
		w.Packet("e", trace.In, make([]byte, 80))
	}
	if _, err := rec.Disable(); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"c/t", "c.pcapng"} {
		p := filepath.Join(dir, f)
		fi, _ := os.Stat(p)
		good := fi.Size()
		fh, _ := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
		_, _ = fh.Write(make([]byte, 5000)[:4000]) // a partial block: length says more
		fh.Close()
		data, _ := os.ReadFile(p)
		copy(data[good:], data[:40]) // looks like the start of another packet
		if f == "c/t" {
			binary.LittleEndian.PutUint64(data[good+24:], 8000*8)
		} else {
			binary.LittleEndian.PutUint32(data[good+4:], 8000)
		}
		_ = os.WriteFile(p, data, 0o644)
		cut, err := Repair(dir)
		if err != nil || len(cut) != 1 || cut[0] != f {
			t.Fatalf("Repair cut %v, %v", cut, err)
		}
		if fi, _ := os.Stat(p); fi.Size() != good {
			t.Errorf("%s is %d bytes after repair, want %d", f, fi.Size(), good)
		}
	}
	events, _ := babeltrace(t, dir)
	if len(events["Checkpoint"]) != 100 {
		t.Errorf("%d checkpoints after repair", len(events["Checkpoint"]))
	}
	if n := len(tshark(t, filepath.Join(dir, "c.pcapng"), "frame.len")); n != 100 {
		t.Errorf("%d packets after repair", n)
	}
}
