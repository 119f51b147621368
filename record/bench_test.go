package record

import (
	"context"
	"testing"
	"time"

	"github.com/dpperf/dpperf/record/trace"
)

// BenchmarkSustainedRecording measures the recording rate with one worker
// emitting checkpoints as fast as it can while the recorder drains its
// default-sized buffer into a CTF file. It reports events/s offered and the
// share of them dropped: above the drain rate the buffer overflows.
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
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- rec.Loop(ctx) }()
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
	b.ReportMetric(float64(events+dropped)/elapsed.Seconds(), "events/s")
	b.ReportMetric(float64(dropped)/float64(max(events+dropped, 1)), "dropped/event")
}
