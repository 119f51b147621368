package ctf

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// MaxPacketSize bounds the size of a packet the reader accepts, so that a
// corrupt size field cannot make it allocate without limit.
const MaxPacketSize = 64 << 20

var (
	reUUID   = regexp.MustCompile(`(?m)^\tuuid = "([^"]*)";`)
	reLabel  = regexp.MustCompile(`(?m)^\tlabel = "((?:[^"\\]|\\.)*)";`)
	reOffS   = regexp.MustCompile(`(?m)^\toffset_s = (-?\d+);`)
	reOff    = regexp.MustCompile(`(?m)^\toffset = (\d+);`)
	reEvent  = regexp.MustCompile(`(?s)\nevent \{\n(.*?)\n\};`)
	reName   = regexp.MustCompile(`(?m)^\tname = "((?:[^"\\]|\\.)*)";$`)
	reID     = regexp.MustCompile(`(?m)^\tid = (\d+);$`)
	reFields = regexp.MustCompile(`(?s)\tfields := struct \{\n(.*?)\t\};`)
	reField  = regexp.MustCompile(`^\t\t([a-z0-9_]+) ([A-Za-z_][A-Za-z0-9_]*);$`)
)

// streamBlock is the stream declaration every dpperf trace carries; the
// reader only decodes packets laid out this way.
var streamBlock = func() string {
	t := (&Metadata{}).Text()
	return t[strings.Index(t, "stream {"):]
}()

// ParseMetadata reads metadata written by Metadata.Text. It rejects text
// that is not CTF 1.8, whose stream layout differs from dpperf's, or whose
// event declarations it cannot decode.
func ParseMetadata(text string) (*Metadata, error) {
	if !strings.HasPrefix(text, MetadataHeader) {
		return nil, errors.New("metadata: not CTF 1.8 text metadata (missing /* CTF 1.8 */ header)")
	}
	if !strings.Contains(text, streamBlock[:strings.Index(streamBlock, "\n};\n")]) {
		return nil, errors.New("metadata: stream layout is not the one dpperf writes")
	}
	md := &Metadata{}
	if m := reUUID.FindStringSubmatch(text); m != nil {
		md.UUID = m[1]
	}
	if m := reLabel.FindStringSubmatch(text); m != nil {
		md.Label = unquote(m[1])
	}
	if m := reOffS.FindStringSubmatch(text); m != nil {
		s, err := strconv.ParseInt(m[1], 10, 64)
		if err != nil || s > 1<<33 || s < -(1<<33) {
			return nil, fmt.Errorf("metadata: clock offset_s %q out of range", m[1])
		}
		md.ClockOffsetNs = s * 1e9
	}
	if m := reOff.FindStringSubmatch(text); m != nil {
		ns, err := strconv.ParseInt(m[1], 10, 64)
		if err != nil || ns >= 1e9 {
			return nil, fmt.Errorf("metadata: clock offset %q out of range", m[1])
		}
		md.ClockOffsetNs += ns
	}
	seen := map[uint8]bool{}
	for _, m := range reEvent.FindAllStringSubmatch(text, -1) {
		c, err := parseEventBlock(m[1])
		if err != nil {
			return nil, err
		}
		if seen[c.ID] {
			return nil, fmt.Errorf("metadata: event id %d declared twice", c.ID)
		}
		seen[c.ID] = true
		md.Classes = append(md.Classes, c)
	}
	return md, nil
}

func parseEventBlock(block string) (EventClass, error) {
	var c EventClass
	n := reName.FindStringSubmatch(block)
	id := reID.FindStringSubmatch(block)
	if n == nil || id == nil {
		return c, errors.New("metadata: event declaration without name or id")
	}
	c.Name = unquote(n[1])
	v, err := strconv.ParseUint(id[1], 10, 8)
	if err != nil {
		return c, fmt.Errorf("metadata: event %q: id %s does not fit the uint8 event header", c.Name, id[1])
	}
	c.ID = uint8(v)
	f := reFields.FindStringSubmatch(block)
	if f == nil {
		return c, fmt.Errorf("metadata: event %q: no fields struct", c.Name)
	}
	for _, line := range strings.Split(strings.TrimSuffix(f[1], "\n"), "\n") {
		if line == "" {
			continue
		}
		m := reField.FindStringSubmatch(line)
		if m == nil {
			return c, fmt.Errorf("metadata: event %q: cannot read field %q", c.Name, strings.TrimSpace(line))
		}
		k := kindByName(m[1])
		if k == KindInvalid {
			return c, fmt.Errorf("metadata: event %q: unknown field type %q", c.Name, m[1])
		}
		c.Fields = append(c.Fields, FieldDecl{Name: m[2], Kind: k})
	}
	return c, nil
}

func unquote(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// Value is one decoded field: Int for signed and Uint for unsigned
// integers, Str for strings.
type Value struct {
	Int  int64
	Uint uint64
	Str  string
}

// Event is one decoded event.
type Event struct {
	Class     *EventClass
	Timestamp uint64 // monotonic ns
	Values    []Value
}

// Field returns the value of the field called name.
func (e *Event) Field(name string) (Value, bool) {
	for i, f := range e.Class.Fields {
		if f.Name == name {
			return e.Values[i], true
		}
	}
	return Value{}, false
}

// Packet is one decoded packet.
type Packet struct {
	Begin, End uint64
	Discarded  uint64 // running total of discarded events
	Seq        uint64
	Label      string
	Thread     string
	Events     []Event
}

// Reader decodes the packets of one stream file.
type Reader struct {
	r       *bufio.Reader
	classes [256]*EventClass
	off     int64
}

// NewReader returns a reader of the stream r described by md.
func NewReader(r io.Reader, md *Metadata) *Reader {
	rd := &Reader{r: bufio.NewReader(r)}
	for i := range md.Classes {
		rd.classes[md.Classes[i].ID] = &md.Classes[i]
	}
	return rd
}

// Next returns the next packet, or io.EOF after the last one. A stream
// that ends inside a packet returns io.ErrUnexpectedEOF.
func (rd *Reader) Next() (*Packet, error) {
	var fixed [packetContextSize]byte
	n, err := io.ReadFull(rd.r, fixed[:])
	if err == io.EOF {
		return nil, io.EOF
	}
	if err != nil {
		return nil, fmt.Errorf("packet at byte %d: %w", rd.off, io.ErrUnexpectedEOF)
	}
	at := rd.off
	rd.off += int64(n)
	le := binary.LittleEndian
	if m := le.Uint32(fixed[0:]); m != Magic {
		return nil, fmt.Errorf("packet at byte %d: bad magic %#x", at, m)
	}
	if id := le.Uint32(fixed[4:]); id != 0 {
		return nil, fmt.Errorf("packet at byte %d: unknown stream id %d", at, id)
	}
	p := &Packet{Begin: le.Uint64(fixed[8:]), End: le.Uint64(fixed[16:]),
		Discarded: le.Uint64(fixed[40:]), Seq: le.Uint64(fixed[48:])}
	size, content := le.Uint64(fixed[24:]), le.Uint64(fixed[32:])
	switch {
	case size%8 != 0 || content%8 != 0:
		return nil, fmt.Errorf("packet at byte %d: size is not a whole number of bytes", at)
	case content > size:
		return nil, fmt.Errorf("packet at byte %d: content size %d exceeds packet size %d", at, content, size)
	case size/8 > MaxPacketSize:
		return nil, fmt.Errorf("packet at byte %d: size %d bytes exceeds the %d limit", at, size/8, MaxPacketSize)
	case content/8 < packetContextSize:
		return nil, fmt.Errorf("packet at byte %d: content size %d bits is smaller than the packet context", at, content)
	case p.End < p.Begin:
		return nil, fmt.Errorf("packet at byte %d: ends before it begins", at)
	}
	body := make([]byte, size/8-packetContextSize)
	if n, err := io.ReadFull(rd.r, body); err != nil {
		rd.off += int64(n)
		return nil, fmt.Errorf("packet at byte %d: %w", at, io.ErrUnexpectedEOF)
	}
	rd.off += int64(len(body))
	body = body[:content/8-packetContextSize]
	d := decoder{b: body}
	p.Label = d.str()
	p.Thread = d.str()
	for d.err == nil && d.pos < len(d.b) {
		id := d.b[d.pos]
		d.pos++
		c := rd.classes[id]
		if c == nil {
			return nil, fmt.Errorf("packet at byte %d: event %d: undeclared event id %d", at, len(p.Events), id)
		}
		ev := Event{Class: c, Timestamp: d.u64(), Values: make([]Value, len(c.Fields))}
		for i, f := range c.Fields {
			ev.Values[i] = d.value(f.Kind)
		}
		if d.err == nil && (ev.Timestamp < p.Begin || ev.Timestamp > p.End) {
			return nil, fmt.Errorf("packet at byte %d: event %d: timestamp %d outside the packet's [%d, %d]", at, len(p.Events), ev.Timestamp, p.Begin, p.End)
		}
		p.Events = append(p.Events, ev)
	}
	if d.err != nil {
		return nil, fmt.Errorf("packet at byte %d: event %d: %w", at, len(p.Events), d.err)
	}
	return p, nil
}

type decoder struct {
	b   []byte
	pos int
	err error
}

var errTruncated = errors.New("truncated by the packet's content size")

func (d *decoder) take(n int) []byte {
	if d.err != nil || len(d.b)-d.pos < n {
		d.err = errTruncated
		return make([]byte, n)
	}
	s := d.b[d.pos : d.pos+n]
	d.pos += n
	return s
}

func (d *decoder) u64() uint64 { return binary.LittleEndian.Uint64(d.take(8)) }

func (d *decoder) str() string {
	if d.err != nil {
		return ""
	}
	i := bytes.IndexByte(d.b[d.pos:], 0)
	if i < 0 {
		d.err = errors.New("string without terminating NUL")
		return ""
	}
	s := string(d.b[d.pos : d.pos+i])
	d.pos += i + 1
	return s
}

func (d *decoder) value(k Kind) Value {
	if k == KindString {
		return Value{Str: d.str()}
	}
	b := d.take(k.Size())
	var u uint64
	for i := len(b) - 1; i >= 0; i-- {
		u = u<<8 | uint64(b[i])
	}
	if !k.Signed() {
		return Value{Uint: u, Int: int64(u)}
	}
	shift := 64 - 8*uint(len(b))
	s := int64(u<<shift) >> shift
	return Value{Int: s, Uint: uint64(s)}
}
