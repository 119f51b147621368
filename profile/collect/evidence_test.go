//go:build evidence

package collect

import (
	"fmt"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/dpperf/dpperf/profile/analyze"
)

// Timing evidence, run by `make evidence` (go test -tags evidence), not by
// `make test`: whether contention shows as latency depends on the
// machine's speed and load.

// fioFor reads from dev for secs seconds, so that two runs overlap.
func fioFor(dev string, bs string, depth int, secs float64) *exec.Cmd {
	return exec.Command("fio", "--name=p", "--filename=/dev/"+dev, "--rw=randread", "--bs="+bs,
		"--iodepth="+strconv.Itoa(depth), "--ioengine=libaio", "--direct=1", "--time_based",
		"--runtime="+time.Duration(secs*float64(time.Second)).String(), "--output=/dev/null")
}

// TestContentionNamesDevice profiles 4 KiB reads alone and next to large
// reads on the same device; compare must name D2C (the device). A live
// experiment can be disturbed by other load on the machine, so it gets up
// to three attempts and must succeed in one.
func TestContentionNamesDevice(t *testing.T) {
	needLive(t)
	dev := loopDevice(t, 64)
	var why string
	for attempt := 1; attempt <= 3; attempt++ {
		if why = contentionVerdict(t, dev); why == "" {
			return
		}
		t.Logf("attempt %d: %s", attempt, why)
	}
	t.Error(why)
}

// contentionVerdict runs one base/loaded pair and says what is wrong, or "".
func contentionVerdict(t *testing.T, dev string) string {
	base := profile(t, openBPF, dev, fioFor(dev, "4k", 32, 1.5))
	loaded := profile(t, openBPF, dev, fioFor(dev, "4k", 32, 1.5), fioFor(dev, "256k", 64, 1.5))
	c := analyze.Compare(base, loaded, "base", "loaded")
	var g *analyze.GroupCmp
	for i := range c.Groups {
		if c.Groups[i].Key == "read 4KiB" {
			g = &c.Groups[i]
		}
	}
	switch {
	case g == nil:
		return fmt.Sprintf("no common 4 KiB group: %+v", c)
	case len(g.Bottleneck) == 0 || g.Bottleneck[0] != "D2C" || g.Cause != "device":
		return fmt.Sprintf("bottleneck %v (%s), want D2C/device: %s", g.Bottleneck, g.Cause, g.Verdict)
	case g.LAD <= 1.2:
		return fmt.Sprintf("contention raised the mean only by LAD %.2f", g.LAD)
	}
	return ""
}

// Between polls the programs wake the reader when the ring is a quarter
// full, so a fast reader loses little; how little depends on how soon the
// reader runs, hence evidence. With a 128 KiB ring (1820 records) and requests at tens of
// thousands a second, polls alone would lose most of them (two thirds in
// a run here with the wake-up disabled).
func TestBPFWakesReaderWhenRingFills(t *testing.T) {
	needLive(t)
	dev := loopDevice(t, 32)
	requests, _, lost, reads := fioBPF(t, dev, Config{BufferKB: 128}, 16)
	if lost*5 > reads {
		t.Errorf("lost %d of %d requests (%d profiled)", lost, reads, requests)
	}
}
