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
// emitting checkpoints as fast as it can while the recorder (Loop) drains
// its default-sized buffer into a CTF file. Above the drain rate, or when
// the drainer is away longer than the buffer lasts, events are dropped.
// It reports the events offered and recorded per second, the share and the
// number dropped, the longest time between two drains, and the CPU time per
// event of the producing thread and of the rest of the process (the
// recorder), which a busy machine does not inflate the way it inflates
// wall time: 1e9 / the larger of the two is the rate one core each can
// sustain. steal-% is the share of the machine's CPU time a hypervisor
// gave to others meanwhile: on a virtual machine, the usual cause of a
// drain gap longer than the buffer lasts.
func BenchmarkSustainedRecording(b *testing.B) { benchRecording(b, 0) }

// BenchmarkSustained10M offers 10 million events per second (paced every
// 1024 events) and reports the same figures.
func BenchmarkSustained10M(b *testing.B) { benchRecording(b, 10e6) }

// benchRecorder returns an enabled recorder of one worker with the
// configuration conf (period and buffer) writing under a temporary root.
func benchRecorder(b *testing.B, conf string) (*Recorder, *trace.Worker) {
	cfg, err := ParseConfig([]byte(conf + "target_root: " + b.TempDir() + "\ndefault_policy: {}\n"))
	if err != nil {
		b.Fatal(err)
	}
	tr := trace.New()
	w := tr.Worker("bench/app", "worker")
	rec := New(tr, cfg, nil)
	if _, err := rec.Enable(); err != nil {
		b.Fatal(err)
	}
	return rec, w
}

func benchRecording(b *testing.B, rate float64) {
	rec, w := benchRecorder(b, "period: 100ms\n")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- rec.Loop(ctx) }()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	thread0, proc0, steal0 := cputime.Thread(), cputime.Process(), cputime.ReadSteal()
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
	steal := steal0.Share(cputime.ReadSteal())
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
	b.ReportMetric(float64(events)/elapsed.Seconds(), "recorded/s")
	b.ReportMetric(float64(dropped)/max(offered, 1), "dropped/event")
	b.ReportMetric(float64(dropped), "dropped")
	b.ReportMetric(float64(thread)/max(offered, 1), "producer-cpu-ns/event")
	b.ReportMetric(float64(proc-thread)/float64(max(events, 1)), "recorder-cpu-ns/event")
	b.ReportMetric(float64(st.MaxDrainGapNs)/1e6, "max-drain-gap-ms")
	b.ReportMetric(100*steal, "steal-%")
}

// BenchmarkDrain is the recorder's cost per event without a producer
// running beside it: a full 16 MiB buffer of checkpoints drained into a CTF
// file (in the page cache) in one call.
func BenchmarkDrain(b *testing.B) {
	rec, w := benchRecorder(b, "period: 1h\nbuffer: 16MiB\n")
	defer rec.Disable()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var events, cpu uint64
	for b.Loop() {
		b.StopTimer()
		before := rec.Stats().Streams[0].Events
		for i := 0; i < 16<<20/28; i++ {
			w.Checkpoint("work", uint32(i), 0, trace.Start)
		}
		b.StartTimer()
		c := cputime.Thread()
		if err := rec.Drain(true); err != nil {
			b.Fatal(err)
		}
		cpu += uint64(cputime.Thread() - c)
		events += rec.Stats().Streams[0].Events - before
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(events), "ns/event")
	b.ReportMetric(float64(cpu)/float64(events), "cpu-ns/event")
}
