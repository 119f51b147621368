package ctf

import (
	"crypto/rand"
	"fmt"
	"strings"
)

// Magic is the first word of every packet.
const Magic = 0xC1FC1FC1

// MetadataHeader is how the text of every CTF 1.8 metadata file begins.
const MetadataHeader = "/* CTF 1.8 */"

// Metadata describes one trace: the directory of one traced component, with
// one stream file per thread. All of its streams share stream class 0.
type Metadata struct {
	UUID  string // unique per trace; babeltrace2 merges traces with equal UUIDs
	Label string // component label, stored in the env block
	// ClockOffsetNs is added to event timestamps (monotonic ns) to get ns
	// since the Unix epoch.
	ClockOffsetNs int64
	// ClockUUID identifies the clock; traces recorded together share it so
	// that viewers can order their events on one time line. Empty: UUID.
	ClockUUID string
	Classes   []EventClass
}

// NewUUID returns a random RFC 4122 version 4 UUID string.
func NewUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// tsdlKeywords are the TSDL reserved words a field must not be called.
var tsdlKeywords = map[string]bool{
	"align": true, "callsite": true, "const": true, "char": true, "clock": true,
	"double": true, "enum": true, "env": true, "event": true, "floating_point": true,
	"float": true, "integer": true, "int": true, "long": true, "short": true,
	"signed": true, "stream": true, "string": true, "struct": true, "trace": true,
	"typealias": true, "typedef": true, "unsigned": true, "variant": true,
	"void": true, "_Bool": true, "_Complex": true, "_Imaginary": true,
}

// Identifier turns name into a TSDL identifier: characters other than
// letters, digits and '_' become '_', and a leading digit or a reserved word
// gets a '_' prefix.
func Identifier(name string) string {
	var sb strings.Builder
	for i, r := range name {
		ok := r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9'
		if !ok && i == 0 && r >= '0' && r <= '9' {
			sb.WriteByte('_')
			sb.WriteRune(r)
			continue
		}
		if !ok {
			r = '_'
		}
		sb.WriteRune(r)
	}
	s := sb.String()
	if s == "" || tsdlKeywords[s] {
		s = "_" + s
	}
	return s
}

// quote makes s safe inside a TSDL string literal.
func quote(s string) string {
	var sb strings.Builder
	sb.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			sb.WriteByte('\\')
			sb.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			sb.WriteByte('_')
		default:
			sb.WriteRune(r)
		}
	}
	sb.WriteByte('"')
	return sb.String()
}

// Text renders the metadata as TSDL.
func (m *Metadata) Text() string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("%s\n\n", MetadataHeader)
	for k := KindU8; k <= KindS64; k++ {
		p("typealias integer { size = %d; align = 8; signed = %t; } := %s;\n", k.Size()*8, k.Signed(), k.TypeName())
	}
	p("\ntrace {\n\tmajor = 1;\n\tminor = 8;\n\tuuid = %s;\n\tbyte_order = le;\n", quote(m.UUID))
	p("\tpacket.header := struct {\n\t\tuint32_t magic;\n\t\tuint32_t stream_id;\n\t};\n};\n\n")
	p("env {\n\ttracer_name = \"dpperf\";\n\tlabel = %s;\n};\n\n", quote(m.Label))
	off := m.ClockOffsetNs
	secs, ns := off/1e9, off%1e9
	if ns < 0 {
		secs, ns = secs-1, ns+1e9
	}
	cu := m.ClockUUID
	if cu == "" {
		cu = m.UUID
	}
	p("clock {\n\tname = monotonic;\n\tuuid = %s;\n\tdescription = \"monotonic clock in ns\";\n", quote(cu))
	p("\tfreq = 1000000000;\n\tprecision = 1;\n\toffset_s = %d;\n\toffset = %d;\n\tabsolute = false;\n};\n\n", secs, ns)
	p("typealias integer { size = 64; align = 8; signed = false; map = clock.monotonic.value; } := uint64_clock_t;\n\n")
	p("stream {\n\tid = 0;\n\tpacket.context := struct {\n")
	for _, f := range []string{"timestamp_begin", "timestamp_end"} {
		p("\t\tuint64_clock_t %s;\n", f)
	}
	for _, f := range []string{"packet_size", "content_size", "events_discarded", "packet_seq_num"} {
		p("\t\tuint64_t %s;\n", f)
	}
	p("\t\tstring session_label;\n\t\tstring thread_name;\n\t};\n")
	p("\tevent.header := struct {\n\t\tuint8_t id;\n\t\tuint64_clock_t timestamp;\n\t};\n};\n")
	for _, c := range m.Classes {
		p("\nevent {\n\tname = %s;\n\tid = %d;\n\tstream_id = 0;\n\tfields := struct {\n", quote(c.Name), c.ID)
		for _, f := range c.Fields {
			p("\t\t%s %s;\n", f.Kind.TypeName(), Identifier(f.Name))
		}
		p("\t};\n};\n")
	}
	return b.String()
}
