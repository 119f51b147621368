package kernel

import (
	"cmp"
	"io"
	"slices"

	"github.com/dpperf/dpperf/record/ctf"
)

// clockGuard keeps the watermark this far behind the drain's clock read.
// The programs stamp with the kernel's NMI-safe monotonic clock and the
// drain reads CLOCK_MONOTONIC through the vDSO; around a timekeeping update
// the two may disagree by microseconds.
const clockGuard = 1_000_000 // ns

// watermark returns the time before which every sample stamped has been
// read, given the drain's clock read now (taken before the per-CPU slots
// were read, and those before the ring was drained), the since marks of
// the slots, and the previous watermark.
//
// A program whose mark the drain did not see either had published its
// sample before (so the drain read it) or set its mark afterwards, and so
// stamped later than now. A program whose mark was seen stamps at or after
// its mark, and also at or after the previous watermark: had it been
// running unseen at the previous drain, it stamped after that drain's
// clock read. The watermark never goes back.
func watermark(now, prev uint64, since []uint64) uint64 {
	w := now - min(now, clockGuard)
	for _, s := range since {
		if s != 0 && s < w {
			w = s
		}
	}
	return max(w, prev)
}

// sample is one decoded event waiting for its packet.
type sample struct {
	ts uint64
	ev []byte // encoded CTF event
}

// cpuStream is the CTF stream of one CPU, or the stream "missed" that only
// counts events. Samples wait in pending until the watermark passes them,
// so that packets follow each other in time and hold their events in time
// order.
type cpuStream struct {
	file    io.Closer
	ctf     *ctf.Stream
	pending []sample
	end     uint64 // end of the last packet (the first: the recording's start)
	lost    uint64 // events lost since the last packet
	late    uint64 // of lost, samples stamped before the last packet's end
}

// pack writes one packet holding the pending samples stamped before upTo,
// in time order, and the events lost since the last packet; the packet
// covers [end of the last packet, upTo]. It writes nothing when there is
// neither. A sample stamped before the last packet's end, which the
// watermark rules out, cannot be placed in order any more: it is counted
// as lost (and late) instead of being moved or dropped unseen. pack
// returns the events written and lost.
func (s *cpuStream) pack(upTo uint64) (events, lost uint64, err error) {
	slices.SortStableFunc(s.pending, func(a, b sample) int { return cmp.Compare(a.ts, b.ts) })
	var buf []byte
	n := 0
	for _, p := range s.pending {
		if p.ts >= upTo {
			break
		}
		n++
		if p.ts < s.end {
			s.lost++
			s.late++
			continue
		}
		buf = append(buf, p.ev...)
		events++
	}
	if events == 0 && s.lost == 0 {
		s.pending = slices.Delete(s.pending, 0, n)
		return 0, 0, nil
	}
	upTo = max(upTo, s.end)
	if err := s.ctf.WritePacket(s.end, upTo, s.lost, buf); err != nil {
		return 0, 0, err
	}
	s.pending = slices.Delete(s.pending, 0, n)
	s.end = upTo
	lost, s.lost = s.lost, 0
	return events, lost, nil
}

// last returns the latest timestamp pending, or 0.
func (s *cpuStream) last() uint64 {
	var t uint64
	for _, p := range s.pending {
		t = max(t, p.ts)
	}
	return t
}
