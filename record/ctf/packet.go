package ctf

import (
	"encoding/binary"
	"errors"
	"io"
)

// Sizes of the fixed parts of a packet, in bytes.
const (
	headerSize        = 8  // magic, stream_id
	fixedContextSize  = 48 // six uint64 fields before the strings
	eventHeaderSize   = 9  // uint8 id, uint64 timestamp
	packetContextSize = headerSize + fixedContextSize
)

// Stream writes the packets of one stream file (one thread of one
// component). Each WritePacket call issues a single Write, so a process
// killed between calls leaves only whole packets behind.
type Stream struct {
	w         io.Writer
	label     string
	thread    string
	seq       uint64
	discarded uint64
	lastEnd   uint64
	buf       []byte
}

// NewStream returns a stream writing to w; label and thread are stored in
// the context of every packet.
func NewStream(w io.Writer, label, thread string) *Stream {
	return &Stream{w: w, label: label, thread: thread}
}

// Packets returns how many packets the stream has written.
func (s *Stream) Packets() uint64 { return s.seq }

// WritePacket writes one packet holding events, a concatenation of encoded
// events (see AppendEventHeader) with nondecreasing timestamps in
// [begin, end]. discarded is the number of events dropped since the
// previous packet; the packet stores the running total, as CTF asks.
func (s *Stream) WritePacket(begin, end, discarded uint64, events []byte) error {
	return s.Commit(begin, end, discarded, append(s.Begin(), events...))
}

// Begin returns the stream's packet buffer holding room for the packet
// header and context only. Appending events to it and passing it to Commit
// writes a packet without copying the events again.
func (s *Stream) Begin() []byte {
	n := s.contextSize()
	if cap(s.buf) < n {
		s.buf = make([]byte, n, 64<<10)
	}
	return s.buf[:n]
}

// contextSize is the size of the packet header and context.
func (s *Stream) contextSize() int {
	return packetContextSize + len(s.label) + 1 + len(s.thread) + 1
}

// Commit fills in the header and context of p, a slice returned by Begin
// with events appended, and writes it as one packet (see WritePacket).
func (s *Stream) Commit(begin, end, discarded uint64, p []byte) error {
	if len(p) < s.contextSize() {
		return errors.New("ctf: packet shorter than its context (not from Stream.Begin)")
	}
	begin = max(begin, s.lastEnd)
	end = max(end, begin)
	s.discarded += discarded
	n := len(p)
	b := p[:0]
	b = binary.LittleEndian.AppendUint32(b, Magic)
	b = binary.LittleEndian.AppendUint32(b, 0)
	b = binary.LittleEndian.AppendUint64(b, begin)
	b = binary.LittleEndian.AppendUint64(b, end)
	b = binary.LittleEndian.AppendUint64(b, uint64(n)*8)
	b = binary.LittleEndian.AppendUint64(b, uint64(n)*8)
	b = binary.LittleEndian.AppendUint64(b, s.discarded)
	b = binary.LittleEndian.AppendUint64(b, s.seq)
	b = AppendString(b, s.label)
	AppendString(b, s.thread)
	s.buf = p[:0] // keep the grown buffer for the next packet
	if _, err := s.w.Write(p); err != nil {
		return err
	}
	s.seq++
	s.lastEnd = end
	return nil
}

// AppendEventHeader appends the header of an event with identifier id at
// timestamp ts. The payload fields follow it.
func AppendEventHeader(b []byte, id uint8, ts uint64) []byte {
	b = append(b, id)
	return binary.LittleEndian.AppendUint64(b, ts)
}

// AppendString appends s as a NUL-terminated string; NUL bytes inside s are
// replaced by '?' so that the field ends where a reader expects.
func AppendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == 0 {
			c = '?'
		}
		b = append(b, c)
	}
	return append(b, 0)
}

// EventTimestamp returns the timestamp of the encoded event at the start
// of ev, and SetEventTimestamp overwrites it.
func EventTimestamp(ev []byte) uint64 { return binary.LittleEndian.Uint64(ev[1:9]) }

// SetEventTimestamp overwrites the timestamp of the encoded event ev.
func SetEventTimestamp(ev []byte, ts uint64) { binary.LittleEndian.PutUint64(ev[1:9], ts) }
