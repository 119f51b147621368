package trace

import (
	"runtime"
	"testing"
	"time"

	"github.com/dpperf/dpperf/record/internal/cputime"
)

// benchBufferSize is the buffer size of the hot-path benchmarks: the
// recorder's default. The drain loop empties it every millisecond, often
// enough that no event is dropped (a dropped event costs less than a
// recorded one, and the benchmarks report drops). The sustained rate at the
// default buffer size is BenchmarkSustainedRecording in package record.
const benchBufferSize = 16 << 20

// BenchmarkCheckpointOff is the cost of an event on a worker with no
// buffer attached (tracing off). It loops over b.N rather than b.Loop:
// b.Loop keeps the arguments of every call alive in memory, which costs
// more than the inlined check being measured (see BenchmarkLoopOverhead).
func BenchmarkCheckpointOff(b *testing.B) {
	w := New().Worker("l", "t")
	for i := 0; i < b.N; i++ {
		w.Checkpoint("route", uint32(i), 0, Start)
	}
}

// BenchmarkCheckpointOffLoop is BenchmarkCheckpointOff written with b.Loop.
func BenchmarkCheckpointOffLoop(b *testing.B) {
	w := New().Worker("l", "t")
	for i := 0; b.Loop(); i++ {
		w.Checkpoint("route", uint32(i), 0, Start)
	}
}

var sinkName = "route"

// BenchmarkLoopOverhead is the cost of a b.Loop iteration that keeps the
// same arguments alive as BenchmarkCheckpointOffLoop and does nothing.
func BenchmarkLoopOverhead(b *testing.B) {
	for i := 0; b.Loop(); i++ {
		keep(sinkName, uint32(i), 0, Start)
	}
}

//go:noinline
func keep(string, uint32, uint64, CheckpointType) {}

// BenchmarkCheckpointOn is the cost of an event with recording on; a
// background goroutine drains the buffer as the recorder would.
func BenchmarkCheckpointOn(b *testing.B) {
	w := New().Worker("l", "t")
	buf := NewBuffer(BufferConfig{Size: benchBufferSize, CTF: true})
	w.Attach(buf)
	stop := drainLoop(buf)
	cpu := threadCPU(b)
	for i := 0; b.Loop(); i++ {
		w.Checkpoint("route", uint32(i), 0, Start)
	}
	b.StopTimer()
	cpu()
	dropped := stop()
	b.ReportMetric(float64(dropped), "dropped")
}

func BenchmarkQueueFillOn(b *testing.B) {
	w := New().Worker("l", "t")
	buf := NewBuffer(BufferConfig{Size: benchBufferSize, CTF: true})
	w.Attach(buf)
	stop := drainLoop(buf)
	cpu := threadCPU(b)
	for i := 0; b.Loop(); i++ {
		w.QueueFill("rx", uint32(i&1023), 1024)
	}
	b.StopTimer()
	cpu()
	b.ReportMetric(float64(stop()), "dropped")
}

func BenchmarkPacketOn(b *testing.B) {
	w := New().Worker("l", "t")
	buf := NewBuffer(BufferConfig{Size: benchBufferSize, Packets: true})
	w.Attach(buf)
	stop := drainLoop(buf)
	frame := make([]byte, 1500)
	cpu := threadCPU(b)
	for b.Loop() {
		w.Packet("eth0", In, frame)
	}
	b.StopTimer()
	cpu()
	b.ReportMetric(float64(stop()), "dropped")
}

// threadCPU locks the benchmark to its thread and returns the function
// that reports the thread's CPU time per operation since the call
// (cpu-ns/op): unlike ns/op it leaves out the time the thread waited for a
// core on a busy machine.
func threadCPU(b *testing.B) func() {
	runtime.LockOSThread()
	t0 := cputime.Thread()
	return func() {
		d := cputime.Thread() - t0
		runtime.UnlockOSThread()
		b.ReportMetric(float64(d.Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
}

// drainLoop drains buf every millisecond, as the recorder does, until the returned function is called;
// that function returns the number of dropped events.
func drainLoop(buf *Buffer) func() uint64 {
	done := make(chan struct{})
	res := make(chan uint64)
	go func() {
		var dropped uint64
		consume := func(byte, []byte) {}
		for {
			dropped += buf.Consume(consume)
			select {
			case <-done:
				res <- dropped + buf.Consume(consume)
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	return func() uint64 { close(done); return <-res }
}

var sink uint64

// BenchmarkNow is the cost of reading the event clock.
func BenchmarkNow(b *testing.B) {
	for b.Loop() {
		sink += Now()
	}
}
