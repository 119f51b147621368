package trace

import (
	"sync/atomic"
)

// Record kinds in a buffer.
const (
	KindCTF    = 1 // payload is one encoded CTF event (package ctf)
	KindPacket = 2 // payload is one captured Ethernet frame
)

// recordHeader is the size of the header before every record: a uint16
// total length and a uint8 kind.
const recordHeader = 3

// prefetchAhead is how far ahead of the record being written the producer
// prefetches, in bytes: several records, so the line is there in time.
const prefetchAhead = 512

// MinBufferSize is the smallest buffer NewBuffer accepts.
const MinBufferSize = 4096

// Buffer is a single-producer single-consumer ring of records. One Worker
// writes, one drainer reads; neither takes a lock. Records never wrap
// half-written into view: the producer publishes a record by advancing
// head after copying all of its bytes.
type Buffer struct {
	data []byte
	mask uint64
	size uint64
	snap int
	ctf  bool
	pcap bool

	_         [64]byte
	whead     uint64        // producer's copy of head
	head      atomic.Uint64 // next byte the producer writes; owned by it
	tailCache uint64        // producer's last view of tail
	dropped   atomic.Uint64
	_         [64]byte
	tail      atomic.Uint64 // next byte the consumer reads; owned by it
}

// BufferConfig says how large a buffer is and which records it keeps.
type BufferConfig struct {
	Size    int  // bytes, rounded up to a power of two ≥ MinBufferSize
	CTF     bool // keep CTF events
	Packets bool // keep captured packets
	SnapLen int  // bytes kept of each captured packet (default 100)
}

// NewBuffer allocates a buffer.
func NewBuffer(c BufferConfig) *Buffer {
	size := uint64(MinBufferSize)
	for size < uint64(c.Size) {
		size <<= 1
	}
	snap := c.SnapLen
	if snap <= 0 {
		snap = 100
	}
	snap = min(snap, MaxSnapLen)
	return &Buffer{data: make([]byte, size), mask: size - 1, size: size, snap: snap, ctf: c.CTF, pcap: c.Packets}
}

// Size returns the capacity of the buffer in bytes.
func (b *Buffer) Size() int { return int(b.size) }

// reserve returns n contiguous free bytes and the position that commits
// them, or false after counting a dropped event when the buffer has no
// room. A record never wraps around the end of the ring: when it would, the
// rest of the ring is skipped, marked by a padding record (kind 0) when at
// least a record header fits there.
func (b *Buffer) reserve(n int) ([]byte, uint64, bool) {
	h := b.whead
	i := h & b.mask
	need := uint64(n)
	rem := b.size - i
	if rem < need {
		need += rem
	}
	if h+need-b.tailCache > b.size {
		b.tailCache = b.tail.Load()
		if h+need-b.tailCache > b.size {
			b.dropped.Add(1)
			return nil, 0, false
		}
	}
	if rem < uint64(n) {
		if rem >= recordHeader {
			header(b.data[i:], int(rem), 0)
		}
		h += rem
		i = 0
	}
	if hasPrefetchw && (i^(i+uint64(n)))&^63 != 0 {
		// The record starts a new cache line: prefetch one further ahead.
		prefetchw(&b.data[(i+prefetchAhead)&b.mask])
	}
	return b.data[i : i+uint64(n) : i+uint64(n)], h + uint64(n), true
}

// commit publishes everything reserved up to end.
func (b *Buffer) commit(end uint64) {
	b.whead = end
	storeRelease(&b.head, end)
}

// freeEvery is how many bytes Consume walks before it frees them: a drain
// that the scheduler interrupts has already given the producer back most
// of what it read. It is larger than any record (lengths are 16 bits).
const freeEvery = 1 << 16

// Consume calls fn with the kind and payload of every published record,
// in place in the ring and in order, skipping padding, and frees their
// space every freeEvery bytes. It returns the number of events dropped
// since the previous call. A payload aliases the ring and is valid only
// during fn. Only one goroutine may consume a buffer at a time.
func (b *Buffer) Consume(fn func(kind byte, payload []byte)) uint64 {
	h := b.head.Load()
	pos := b.tail.Load()
	for pos < h {
		// Walk the published records up to the end of the ring (or head,
		// or freeEvery bytes); a remainder too short for a header ends the
		// ring's lap.
		i := pos & b.mask
		end := min(b.size, i+(h-pos), i+freeEvery)
		j := i
		for end-j >= recordHeader {
			n := uint64(b.data[j]) | uint64(b.data[j+1])<<8
			if n < recordHeader || n > end-j {
				break
			}
			if k := b.data[j+2]; k != 0 {
				p := b.data[j+recordHeader : j+n : j+n]
				fixName(k, p)
				fn(k, p)
			}
			j += n
		}
		if j == i || j < end && end == b.size && b.size-j < recordHeader {
			j = end // skip the short remainder at the end of the ring
		}
		if j == i {
			break // cannot happen with one producer; never read garbage
		}
		pos += j - i
		b.tail.Store(pos)
	}
	b.tail.Store(h)
	return b.dropped.Swap(0)
}

// Drain appends all published records to dst, each with its record
// header, and frees their space; Records walks the result. It returns the
// extended slice and the number of events dropped since the previous call.
func (b *Buffer) Drain(dst []byte) ([]byte, uint64) {
	d := b.Consume(func(kind byte, p []byte) {
		n := len(p) + recordHeader
		dst = append(dst, byte(n), byte(n>>8), kind)
		dst = append(dst, p...)
	})
	return dst, d
}

// Records calls fn for every record in p, a slice filled by Drain, with
// the record's kind and payload, skipping padding. It stops at the first
// malformed record.
func Records(p []byte, fn func(kind byte, payload []byte)) {
	for len(p) >= recordHeader {
		n := int(p[0]) | int(p[1])<<8
		if n < recordHeader || n > len(p) {
			return
		}
		if p[2] != 0 {
			fn(p[2], p[recordHeader:n])
		}
		p = p[n:]
	}
}

// Used returns the number of bytes waiting to be drained.
func (b *Buffer) Used() int { return int(b.head.Load() - b.tail.Load()) }
