package trace

import (
	"testing"
	"time"
)

// benchBufferSize is the buffer size of the benchmarks.
const benchBufferSize = 1 << 20

// BenchmarkCheckpointOff is the cost of an event on a worker with no
// buffer attached (tracing off).
func BenchmarkCheckpointOff(b *testing.B) {
	w := New().Worker("l", "t")
	for i := 0; b.Loop(); i++ {
		w.Checkpoint("route", uint32(i), 0, Start)
	}
}

// BenchmarkCheckpointOn is the cost of an event with recording on; a
// background goroutine drains the buffer as the recorder would.
func BenchmarkCheckpointOn(b *testing.B) {
	w := New().Worker("l", "t")
	buf := NewBuffer(BufferConfig{Size: benchBufferSize, CTF: true})
	w.Attach(buf)
	stop := drainLoop(buf)
	for i := 0; b.Loop(); i++ {
		w.Checkpoint("route", uint32(i), 0, Start)
	}
	b.StopTimer()
	dropped := stop()
	b.ReportMetric(float64(dropped), "dropped")
}

func BenchmarkQueueFillOn(b *testing.B) {
	w := New().Worker("l", "t")
	buf := NewBuffer(BufferConfig{Size: benchBufferSize, CTF: true})
	w.Attach(buf)
	stop := drainLoop(buf)
	for i := 0; b.Loop(); i++ {
		w.QueueFill("rx", uint32(i&1023), 1024)
	}
	b.StopTimer()
	b.ReportMetric(float64(stop()), "dropped")
}

func BenchmarkPacketOn(b *testing.B) {
	w := New().Worker("l", "t")
	buf := NewBuffer(BufferConfig{Size: benchBufferSize, Packets: true})
	w.Attach(buf)
	stop := drainLoop(buf)
	frame := make([]byte, 1500)
	for b.Loop() {
		w.Packet("eth0", In, frame)
	}
	b.StopTimer()
	b.ReportMetric(float64(stop()), "dropped")
}

// drainLoop drains buf every millisecond, as the recorder does, until the returned function is called;
// that function returns the number of dropped events.
func drainLoop(buf *Buffer) func() uint64 {
	done := make(chan struct{})
	res := make(chan uint64)
	go func() {
		var raw []byte
		var dropped uint64
		for {
			var d uint64
			raw, d = buf.Drain(raw[:0])
			dropped += d
			select {
			case <-done:
				_, d = buf.Drain(raw[:0])
				res <- dropped + d
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
