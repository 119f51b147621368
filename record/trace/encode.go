package trace

import (
	"bytes"
	"encoding/binary"
	"strings"
)

// MaxNameLen is the longest name, in bytes, an event keeps; longer names
// are cut.
const MaxNameLen = 200

// MaxSnapLen is the largest snap length a buffer accepts.
const MaxSnapLen = 9216

// clean cuts s to MaxNameLen and replaces NUL bytes, which would end the
// CTF string early.
func clean(s string) string {
	s = cut(s)
	if strings.IndexByte(s, 0) >= 0 {
		s = strings.ReplaceAll(s, "\x00", "?")
	}
	return s
}

// cut cuts s to MaxNameLen. Events whose only string is their last field
// (Checkpoint, Queue_fill) keep NUL bytes on the hot path; fixName
// replaces them when the buffer is consumed.
func cut(s string) string {
	if len(s) > MaxNameLen {
		return s[:MaxNameLen]
	}
	return s
}

// Offsets of the name in the payloads of events whose name is their last
// field.
const (
	checkpointName = 9 + 4 + 8 + 1
	queueFillName  = 9 + 4 + 4
)

// fixName replaces NUL bytes inside the name of a Checkpoint or Queue_fill
// payload p by '?', so that the name ends at the event's last byte.
func fixName(kind byte, p []byte) {
	if kind != KindCTF || len(p) == 0 {
		return
	}
	var name []byte
	switch {
	case p[0] == 7 && len(p) > checkpointName:
		name = p[checkpointName : len(p)-1]
	case p[0] == 8 && len(p) > queueFillName:
		name = p[queueFillName : len(p)-1]
	}
	if len(name) < 64 {
		// Most names are short: a plain loop costs less than a call to
		// bytes.IndexByte (a fifth of the drain's time when it was used).
		for i, c := range name {
			if c == 0 {
				name[i] = '?'
			}
		}
		return
	}
	for {
		i := bytes.IndexByte(name, 0)
		if i < 0 {
			return
		}
		name[i] = '?'
		name = name[i+1:]
	}
}

func header(s []byte, n int, kind byte) {
	s[0], s[1], s[2] = byte(n), byte(n>>8), kind
}

// ctfHeader fills the record header and the CTF event header (id and
// timestamp) at the start of s: 12 bytes.
func ctfHeader(s []byte, n int, id uint8) {
	header(s, n, KindCTF)
	s[3] = id
	binary.LittleEndian.PutUint64(s[4:], Now())
}

func (b *Buffer) checkpoint(name string, data uint32, addr uint64, typ uint8) {
	if !b.ctf {
		return
	}
	name = cut(name)
	const fixed = recordHeader + checkpointName
	n := fixed + len(name) + 1
	s, end, ok := b.reserve(n)
	if !ok {
		return
	}
	ctfHeader(s, n, 7)
	binary.LittleEndian.PutUint32(s[12:], data)
	binary.LittleEndian.PutUint64(s[16:], addr)
	s[24] = typ
	copy(s[fixed:], name)
	s[n-1] = 0
	b.commit(end)
}

func (b *Buffer) twoStrings(id uint8, s1, s2 string) {
	if !b.ctf {
		return
	}
	s1, s2 = clean(s1), clean(s2)
	const fixed = recordHeader + 9
	n := fixed + len(s1) + 1 + len(s2) + 1
	s, end, ok := b.reserve(n)
	if !ok {
		return
	}
	ctfHeader(s, n, id)
	copy(s[fixed:], s1)
	s[fixed+len(s1)] = 0
	copy(s[fixed+len(s1)+1:], s2)
	s[n-1] = 0
	b.commit(end)
}

func (b *Buffer) signal(id uint8, number uint32, context uint64) {
	if !b.ctf {
		return
	}
	n := recordHeader + 9 + 4
	if id == 6 {
		n += 8
	}
	s, end, ok := b.reserve(n)
	if !ok {
		return
	}
	ctfHeader(s, n, id)
	binary.LittleEndian.PutUint32(s[12:], number)
	if id == 6 {
		binary.LittleEndian.PutUint64(s[16:], context)
	}
	b.commit(end)
}

func (b *Buffer) queueFill(name string, used, capacity uint32) {
	if !b.ctf {
		return
	}
	name = cut(name)
	const fixed = recordHeader + queueFillName
	n := fixed + len(name) + 1
	s, end, ok := b.reserve(n)
	if !ok {
		return
	}
	ctfHeader(s, n, 8)
	binary.LittleEndian.PutUint32(s[12:], used)
	binary.LittleEndian.PutUint32(s[16:], capacity)
	copy(s[fixed:], name)
	s[n-1] = 0
	b.commit(end)
}

// Layout of a KindPacket payload: uint64 timestamp, uint8 direction,
// uint32 original length, NUL-terminated interface name, captured bytes.
func (b *Buffer) packet(iface string, dir Direction, frame []byte) {
	if !b.pcap {
		return
	}
	iface = clean(iface)
	data := frame[:min(len(frame), b.snap)]
	const fixed = recordHeader + 8 + 1 + 4
	n := fixed + len(iface) + 1 + len(data)
	s, end, ok := b.reserve(n)
	if !ok {
		return
	}
	header(s, n, KindPacket)
	binary.LittleEndian.PutUint64(s[3:], Now())
	s[11] = byte(dir)
	binary.LittleEndian.PutUint32(s[12:], uint32(len(frame)))
	copy(s[fixed:], iface)
	s[fixed+len(iface)] = 0
	copy(s[fixed+len(iface)+1:], data)
	b.commit(end)
}

// CapturedPacket is a decoded KindPacket record.
type CapturedPacket struct {
	Timestamp uint64
	Dir       Direction
	OrigLen   int
	Iface     string
	Data      []byte // aliases the drained bytes
}

// DecodePacket decodes the payload of a KindPacket record.
func DecodePacket(p []byte) (CapturedPacket, bool) {
	if len(p) < 13 {
		return CapturedPacket{}, false
	}
	c := CapturedPacket{Timestamp: binary.LittleEndian.Uint64(p), Dir: Direction(p[8]),
		OrigLen: int(binary.LittleEndian.Uint32(p[9:]))}
	rest := p[13:]
	i := bytes.IndexByte(rest, 0)
	if i < 0 {
		return CapturedPacket{}, false
	}
	c.Iface, c.Data = string(rest[:i]), rest[i+1:]
	return c, true
}
