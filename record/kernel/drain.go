package kernel

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/cilium/ebpf/ringbuf"

	"github.com/dpperf/dpperf/record/ctf"
	"github.com/dpperf/dpperf/record/trace"
)

// settleTries bounds how often the final drain waits a millisecond for
// programs still running after the detach (the kernel waits for them when
// it unregisters a tracepoint, so they are normally gone already).
const settleTries = 100

// loop reads the ring buffer as samples arrive and, every period, writes
// the packets the watermark allows. After Stop has detached the programs
// it drains once more and writes everything left.
func (r *Recorder) loop() error {
	for {
		stopping := r.stop.Load()
		if !stopping {
			if err := r.read(time.Now().Add(r.opts.Period)); err != nil {
				return err
			}
		}
		if err := r.flush(stopping); err != nil {
			return err
		}
		if stopping {
			return nil
		}
	}
}

// read hands the ring buffer's samples to add until deadline; a deadline
// in the past reads what the ring holds and returns.
func (r *Recorder) read(deadline time.Time) error {
	var rec ringbuf.Record
	r.rd.SetDeadline(deadline)
	for {
		err := r.rd.ReadInto(&rec)
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read ring buffer: %w", err)
		}
		r.add(rec.RawSample)
	}
}

// add decodes one sample into a CTF event pending in its CPU's stream.
func (r *Recorder) add(s []byte) {
	if len(s) < sampleHeader {
		return
	}
	le := binary.LittleEndian
	ts, cpu, idx, pidTgid := le.Uint64(s), le.Uint32(s[8:]), le.Uint32(s[12:]), le.Uint64(s[16:])
	if int(idx) >= len(r.formats) {
		return
	}
	ev := ctf.AppendEventHeader(nil, uint8(ctf.FirstCustomID+idx), ts)
	ev = le.AppendUint32(ev, uint32(pidTgid))
	ev = le.AppendUint32(ev, uint32(pidTgid>>32))
	ev = r.formats[idx].AppendFields(ev, s[sampleHeader:])
	if st := r.cpuStream(cpu); st != nil {
		st.pending = append(st.pending, sample{ts, ev})
	} else {
		r.unwritten++
	}
}

// cpuStream returns the stream of cpu, creating its file on first use;
// nil when the file cannot be created.
func (r *Recorder) cpuStream(cpu uint32) *cpuStream {
	if s := r.streams[cpu]; s != nil {
		return s
	}
	s := r.newStream(fmt.Sprintf("cpu%d", cpu))
	if s != nil {
		r.streams[cpu] = s
	}
	return s
}

// newStream creates the stream file called name; its first packet begins
// at the recording's start.
func (r *Recorder) newStream(name string) *cpuStream {
	f, err := os.OpenFile(filepath.Join(r.opts.Dir, name), os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o644)
	if err != nil {
		return nil
	}
	return &cpuStream{file: f, ctf: ctf.NewStream(f, Label, name), end: r.start}
}

// flush reads the clock, then the per-CPU slots, then drains the ring, so
// that the watermark computed from the first two covers every sample
// stamped before it (see watermark). It writes, per stream, the samples
// stamped before the watermark and the events lost meanwhile: ring
// losses to their CPU's stream, the programs' misses to the stream
// "missed". The final flush writes every sample left.
func (r *Recorder) flush(final bool) error {
	now := trace.NowNanos()
	slots, err := r.readSlots(final)
	if err != nil {
		return err
	}
	if err := r.read(time.Now()); err != nil {
		return err
	}
	since := make([]uint64, len(slots))
	for i, s := range slots {
		since[i] = s.Since
	}
	r.mark = watermark(now, r.mark, since)
	if r.lostSum == nil {
		r.lostSum = make([]uint64, len(slots))
	}
	var unwritten uint64
	for cpu, s := range slots {
		if d := s.Lost - r.lostSum[cpu]; d > 0 {
			r.lostSum[cpu] = s.Lost
			if st := r.cpuStream(uint32(cpu)); st != nil {
				st.lost += d
			} else {
				unwritten += d
			}
		}
	}
	unwritten, r.unwritten = unwritten+r.unwritten, 0
	upTo := r.mark
	if final {
		upTo = max(now, r.mark)
		for _, st := range r.streams {
			upTo = max(upTo, st.last()+1)
		}
	}
	var events, lost, late uint64
	for _, st := range r.streams {
		e, l, err := st.pack(upTo)
		if err != nil {
			return fmt.Errorf("write kernel packet: %w", err)
		}
		events, lost, late = events+e, lost+l, late+st.late
	}
	missed := r.missedDelta()
	if missed > 0 && r.missed == nil {
		r.missed = r.newStream(MissedStream)
	}
	if missed > 0 && r.missed != nil {
		r.missed.lost += missed
		if _, _, err := r.missed.pack(upTo); err != nil {
			return fmt.Errorf("write kernel packet: %w", err)
		}
	}
	r.mu.Lock()
	r.stats.Events += events
	r.stats.Lost += lost + missed + unwritten
	r.stats.Missed += missed
	r.stats.Late = late
	r.mu.Unlock()
	return nil
}

// readSlots reads the per-CPU slots. Before the final flush it waits, a
// bounded number of times, for programs still running after the detach.
func (r *Recorder) readSlots(final bool) ([]cpuSlot, error) {
	for try := 0; ; try++ {
		var slots []cpuSlot
		if err := r.slots.Lookup(uint32(0), &slots); err != nil {
			return nil, fmt.Errorf("read per-CPU slots: %w", err)
		}
		busy := false
		for _, s := range slots {
			busy = busy || s.Since != 0
		}
		if !final || !busy || try == settleTries {
			return slots, nil
		}
		time.Sleep(time.Millisecond)
	}
}

// missedDelta returns the programs' recursion misses since the last call.
// The kernel counts them per program (since Linux 5.12; older kernels
// report none).
func (r *Recorder) missedDelta() uint64 {
	var total uint64
	for _, p := range r.progs {
		if st, err := p.Stats(); err == nil {
			total += st.RecursionMisses
		}
	}
	d := total - min(total, r.misses)
	r.misses = max(r.misses, total)
	return d
}
