package collect

import (
	"bytes"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// fioBPF profiles one fio run of 4 KiB reads at depth with the BPF
// collector and returns the requests in the profile, those whose slot
// was taken over, those lost, and the reads fio completed.
func fioBPF(t *testing.T, dev string, cfg Config, depth int) (requests, overwritten, lost, reads int64) {
	t.Helper()
	cmd := fio(dev, "4k", depth, 6000)
	cmd.Args[len(cmd.Args)-1] = "--minimal"
	var out bytes.Buffer
	cmd.Stdout = &out
	open := func(c Config) (stopper, error) {
		c.BufferKB = cfg.BufferKB
		return OpenBPF(c)
	}
	pr := profile(t, open, dev, cmd)
	g := group(t, pr, "read 4KiB")
	return int64(g.Requests), pr.Counts.Restarted, pr.Counts.Lost, fioReads(t, cmd, out.String())
}

// fioReads takes the reads completed from fio's terse output (field 6:
// KiB read, in 4 KiB blocks).
func fioReads(t *testing.T, cmd *exec.Cmd, out string) int64 {
	t.Helper()
	f := strings.Split(strings.TrimSpace(out), ";")
	if len(f) < 7 {
		t.Fatalf("%v: output %q", cmd.Args, out)
	}
	kb, err := strconv.ParseInt(f[5], 10, 64)
	if err != nil {
		t.Fatalf("fio KiB read %q: %v", f[5], err)
	}
	return kb / 4
}

// Records wait in the ring buffer for up to pollEvery; Stop must still
// hand every one of them to the analyzer: each read fio completed is in
// the profile, or counted as overwritten when its slot was taken over.
// Without the last drain the records of the last poll period would be
// missing.
func TestBPFDrainsAtStop(t *testing.T) {
	needLive(t)
	dev := loopDevice(t, 32)
	requests, overwritten, lost, reads := fioBPF(t, dev, Config{}, 4)
	got := requests + overwritten
	// Without the last drain the records of the last poll period (up to
	// 100 ms of a run of about a second) would be missing. Other readers
	// of a new device (udev's probes) may add a few. On a machine loaded
	// by other work up to 4% of the records have been seen missing
	// without being counted as lost or overwritten (while the kernel's
	// own count of completed reads was exact): a loss docs/profile.md
	// lists as open, which the bound below leaves room for.
	if got < reads-reads/20 || got > reads+64 || lost != 0 {
		t.Errorf("fio read %d blocks; profile has %d requests, %d overwritten, %d lost", reads, requests, overwritten, lost)
	}
}

// A few requests stay in the programs' per-CPU staging buffers (a batch
// is sent when full or at the next record after 10 ms); Stop must read
// them after detaching. Twelve direct reads in a row fit in one batch, so
// without that read the profile would be empty.
func TestBPFStagedRecordsAtStop(t *testing.T) {
	needLive(t)
	dev := loopDevice(t, 1)
	cmd := exec.Command("dd", "if=/dev/"+dev, "of=/dev/null", "bs=4k", "count=12", "iflag=direct", "status=none")
	pr := profile(t, openBPF, dev, cmd)
	// Other readers of a new device (udev's probes) may add a few.
	if g := group(t, pr, "read 4KiB"); g.Requests < 12 || g.Requests > 12+64 || pr.Counts.Lost != 0 {
		t.Errorf("12 reads; profile has %d requests, %d lost", g.Requests, pr.Counts.Lost)
	}
}
