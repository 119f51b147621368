package kernel

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"
)

// signaller loads a tracepoint program that sends SIGWINCH (ignored by
// Go programs) to the calling thread when this process calls getppid. The
// signal's tracepoint, signal:signal_generate, then fires while a BPF
// program runs on the CPU, so the kernel skips the recorder's program for
// it: a tracepoint hit the recorder misses, every time.
func signaller(t *testing.T) {
	t.Helper()
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{
		Name:    "dpperf_test_sig",
		Type:    ebpf.TracePoint,
		License: "GPL",
		Instructions: asm.Instructions{
			asm.FnGetCurrentPidTgid.Call(),
			asm.RSh.Imm(asm.R0, 32),
			asm.JNE.Imm(asm.R0, int32(os.Getpid()), "exit"),
			asm.Mov.Imm(asm.R1, int32(syscall.SIGWINCH)),
			asm.FnSendSignalThread.Call(),
			asm.Mov.Imm(asm.R0, 0).WithSymbol("exit"),
			asm.Return(),
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { prog.Close() })
	l, err := link.Tracepoint("syscalls", "sys_enter_getppid", prog, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
}

// Tracepoint hits the kernel does not run the recorder's program for are
// counted as lost, in the stream "missed" that babeltrace2 and the
// analyzers read.
func TestMissedCounted(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("the kernel recorder test runs as root (CI and the developer machines are root)")
	}
	r, err := Open([]string{"signal:signal_generate"})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "kernel")
	if err := r.Start(Options{Dir: dir, Period: 20 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	signaller(t)
	const calls = 200
	for i := 0; i < calls; i++ {
		syscall.Getppid()
	}
	// One SIGWINCH sent outside a BPF program: recorded.
	if err := syscall.Tgkill(os.Getpid(), syscall.Gettid(), syscall.SIGWINCH); err != nil {
		t.Fatal(err)
	}
	st, err := r.Stop()
	if err != nil {
		t.Fatal(err)
	}
	rc := readRecording(t, dir)
	var recorded int
	for _, ev := range rc.decoded {
		sig, _ := ev.Field("sig")
		tgid, _ := ev.Field("tgid")
		if sig.Int == int64(syscall.SIGWINCH) && tgid.Uint == uint64(os.Getpid()) {
			recorded++
		}
	}
	if st.Missed < calls || st.Lost < st.Missed || recorded != 1 {
		t.Errorf("%d signals sent inside a BPF program and one outside: %d recorded, %d missed, %d lost", calls, recorded, st.Missed, st.Lost)
	}
	if rc.perStream[MissedStream] != st.Missed || rc.discarded != st.Lost {
		t.Errorf("streams count %d missed, %d discarded in all; stats say %d, %d", rc.perStream[MissedStream], rc.discarded, st.Missed, st.Lost)
	}
	bt, err := exec.LookPath("babeltrace2")
	if err != nil {
		t.Fatal("babeltrace2 is required")
	}
	out, err := exec.Command(bt, dir).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "discarded") || !strings.Contains(string(out), "signal:signal_generate") {
		t.Errorf("babeltrace2: %v\n%.3000s", err, out)
	}
}
