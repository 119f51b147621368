package collect

import (
	"encoding/binary"
	"strconv"
	"testing"

	"github.com/dpperf/dpperf/profile/event"
)

func TestDutyFor(t *testing.T) {
	for _, tc := range []struct {
		n      uint32
		cycled bool
		share  float64
	}{
		{0, false, 1},
		{1, false, 1},
		{3, false, 1.0 / 3},
		{dutyMinSample - 1, false, 1.0 / (dutyMinSample - 1)},
		{dutyMinSample, true, dutyDivisor / float64(dutyMinSample)},
		{1000, true, dutyDivisor / 1000.0},
	} {
		d, share := dutyFor(tc.n)
		if (d.period != 0) != tc.cycled || share != tc.share {
			t.Errorf("dutyFor(%d) = %+v, %g; want cycled %v, share %g", tc.n, d, share, tc.cycled, tc.share)
		}
		// The share kept by hash times the share of time attached is 1/n.
		if d.period != 0 && d.window*dutyDivisor != d.period {
			t.Errorf("dutyFor(%d): window %v of %v is not 1/%d", tc.n, d.window, d.period, dutyDivisor)
		}
	}
	if 500e6%dutyPeriod != 0 {
		t.Errorf("period %v does not divide the 500 ms windows of profile-overhead.sh", dutyPeriod)
	}
}

func TestSampleBelow(t *testing.T) {
	for _, tc := range []struct {
		share float64
		want  uint32
	}{
		{1, 1<<32 - 1},
		{0.5, 1 << 31},
		{0.25, 1 << 30},
		{0.01, 42949672},
	} {
		if got := sampleBelow(tc.share); got != tc.want {
			t.Errorf("sampleBelow(%g) = %d, want %d", tc.share, got, tc.want)
		}
	}
}

func TestInFlightCountsSlotsInUse(t *testing.T) {
	table := make([]byte, 4*blockRecordLen)
	if n := inFlight(table); n != 0 {
		t.Errorf("empty table: %d in flight", n)
	}
	binary.LittleEndian.PutUint32(table[blockRecordLen+48:], 7<<20)
	binary.LittleEndian.PutUint32(table[3*blockRecordLen+48:], 7<<20|1)
	binary.LittleEndian.PutUint64(table[2*blockRecordLen:], 12345) // a timestamp without a device: free
	if n := inFlight(table); n != 2 {
		t.Errorf("%d in flight, want 2", n)
	}
}

// With --sample 100 or more the block programs are attached for a window
// of each period only (duty.go), and the program of the path's last event
// stays attached until the requests started in the window have finished.
// Every record must still hold one whole request: Q, G, D and C, in that
// order. Each fio run lasts longer than two periods, so that windows fall
// inside it whatever the machine's speed: a run of a fixed number of reads
// that a fast machine finished between two windows gave no record at all,
// every time, since each run opens the collector (and its first window)
// at the same moment before fio starts. fio runs until records arrived.
func TestBPFDutyCycle(t *testing.T) {
	needLive(t)
	dev := loopDevice(t, 32)
	cfg := blockConfig(t, dev)
	cfg.Sample = dutyMinSample
	c, err := OpenBPF(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if c.duty.period == 0 {
		c.Close()
		t.Fatalf("no duty cycle for --sample %d", cfg.Sample)
	}
	var records, bad, reads int64
	for run := 0; run < 50 && records < 20; run++ {
		if run > 0 {
			if c, err = OpenBPF(cfg); err != nil {
				t.Fatal(err)
			}
		}
		cmd := fio(dev, "4k", 8, 0)
		cmd.Args = append(cmd.Args[:len(cmd.Args)-2], "--time_based",
			"--runtime="+strconv.FormatInt((2*dutyPeriod+dutyPeriod/2).Milliseconds(), 10)+"ms", "--minimal")
		out := readDuring(t, c, cmd, func(r *event.Record) {
			if r.Bytes != 4096 || r.Op != event.OpRead {
				return // udev's probes
			}
			records++
			q, g, dd, cc := r.TS[0], r.TS[1], r.TS[3], r.TS[4]
			if r.Dev != cfg.Dev || q <= 0 || g < q || dd < g || cc < dd {
				if bad++; bad <= 5 {
					t.Errorf("record %+v", r.TS[:5])
				}
			}
		})
		reads += fioReads(t, cmd, out)
		if lost := c.Lost(); lost != 0 {
			t.Errorf("%d records lost", lost)
		}
		t.Logf("run %d: %d records of %d reads so far; %d records cut at the end of a window", run, records, reads, c.Overwritten())
		c.Close()
	}
	if records == 0 {
		t.Errorf("no records in %d reads", reads)
	}
}
