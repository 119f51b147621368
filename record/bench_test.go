package record

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/dpperf/dpperf/record/internal/cputime"
	"github.com/dpperf/dpperf/record/trace"
)

// BenchmarkSustainedRecording measures the recording rate with one worker
// emitting checkpoints as fast as it can while the recorder drains its
// default-sized buffer into a CTF file. It reports events/s offered and the
// share of them dropped: above the drain rate the buffer overflows. It also
// reports the CPU time per event of the producing thread and of the rest of
// the process (the recorder), which a busy machine does not inflate the way
// it inflates wall time: 1e9 / the larger of the two is the rate one core
// each can sustain.
func BenchmarkSustainedRecording(b *testing.B) { benchRecording(b, 0) }

// BenchmarkSustained10M offers 10 million events per second (paced every
// 1024 events) and reports the share dropped at the default buffer size.
func BenchmarkSustained10M(b *testing.B) { benchRecording(b, 10e6) }

func benchRecording(b *testing.B, rate float64) {
	cfg, err := ParseConfig([]byte("period: 100ms\ntarget_root: " + b.TempDir() + "\ndefault_policy: {}\n"))
	if err != nil {
		b.Fatal(err)
	}
	tr := trace.New()
	w := tr.Worker("bench/app", "worker")
	rec := New(tr, cfg, nil)
	if _, err := rec.Enable(); err != nil {
		b.Fatal(err)
	}
	// Drain as Loop does, and note the longest time between two drains:
	// a buffer overflows when the drainer is away longer than it takes to
	// fill, as on a machine whose cores are busy with other work.
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	var maxGap time.Duration
	go func() {
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		last := time.Now()
		for {
			select {
			case <-ctx.Done():
				done <- nil
				return
			case <-tick.C:
				now := time.Now()
				maxGap = max(maxGap, now.Sub(last))
				last = now
				if err := rec.Drain(false); err != nil {
					done <- err
					return
				}
			}
		}
	}()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	thread0, proc0 := cputime.Thread(), cputime.Process()
	start := time.Now()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		w.Checkpoint("work", uint32(i), 0, trace.Start)
		if rate > 0 && i&1023 == 0 {
			due := start.Add(time.Duration(float64(i) / rate * 1e9))
			for time.Now().Before(due) {
			}
		}
	}
	b.StopTimer()
	elapsed := time.Since(start)
	thread := cputime.Thread() - thread0
	cancel()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	st, err := rec.Disable()
	if err != nil {
		b.Fatal(err)
	}
	var events, dropped uint64
	for _, s := range st.Streams {
		events, dropped = events+s.Events, dropped+s.Discarded
	}
	proc := cputime.Process() - proc0
	offered := float64(events + dropped)
	b.ReportMetric(offered/elapsed.Seconds(), "events/s")
	b.ReportMetric(float64(dropped)/max(offered, 1), "dropped/event")
	b.ReportMetric(float64(thread)/max(offered, 1), "producer-cpu-ns/event")
	b.ReportMetric(float64(proc-thread)/float64(max(events, 1)), "recorder-cpu-ns/event")
	b.ReportMetric(float64(maxGap.Microseconds())/1000, "max-drain-gap-ms")
}
