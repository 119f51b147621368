package perfiface

import (
	"fmt"
	"strings"

	"github.com/dpperf/dpperf/bpfprog"
)

// field is a protocol header field at a byte offset from its header.
type field struct {
	off, size int
	name      string
}

// Header layouts, offsets from the header's start.
var (
	ethFields  = []field{{0, 6, "eth.dst"}, {6, 6, "eth.src"}, {12, 2, "eth.type"}}
	vlanFields = []field{{14, 2, "vlan.tci"}, {16, 2, "vlan.type"}}
	ipv4Fields = []field{{0, 1, "ip.ver_ihl"}, {1, 1, "ip.tos"}, {2, 2, "ip.total_len"}, {4, 2, "ip.id"},
		{6, 2, "ip.frag_off"}, {8, 1, "ip.ttl"}, {9, 1, "ip.proto"}, {10, 2, "ip.csum"},
		{12, 4, "ip.src"}, {16, 4, "ip.dst"}}
	ipv6Fields = []field{{0, 4, "ipv6.ver_tc_flow"}, {4, 2, "ipv6.payload_len"}, {6, 1, "ipv6.next_hdr"},
		{7, 1, "ipv6.hop_limit"}, {8, 16, "ipv6.src"}, {24, 16, "ipv6.dst"}}
	tcpFields = []field{{0, 2, "tcp.sport"}, {2, 2, "tcp.dport"}, {4, 4, "tcp.seq"}, {8, 4, "tcp.ack_seq"},
		{12, 1, "tcp.doff"}, {13, 1, "tcp.flags"}, {12, 2, "tcp.doff_flags"}, {14, 2, "tcp.window"}, {16, 2, "tcp.csum"}, {18, 2, "tcp.urg_ptr"}}
	udpFields  = []field{{0, 2, "udp.sport"}, {2, 2, "udp.dport"}, {4, 2, "udp.len"}, {6, 2, "udp.csum"}}
	icmpFields = []field{{0, 1, "icmp.type"}, {1, 1, "icmp.code"}, {2, 2, "icmp.csum"}, {4, 2, "icmp.id"}, {6, 2, "icmp.seq"}}
	// QUIC (RFC 9000 §17) behind UDP port 443: the first byte's header
	// form and fixed bits, and a long header's version and connection ID
	// length.
	quicFields = []field{{0, 1, "quic.flags"}, {1, 4, "quic.version"}, {5, 1, "quic.dcid_len"}}
	quicBits   = map[uint64]string{0x80: "long_header", 0x40: "fixed_bit"}
	// IPv6 extension headers (RFC 8200 §4): ext[k] of pkt.ipv6.ext.
	extFields = []field{{0, 1, "ext.next_hdr"}, {1, 1, "ext.hdr_len"}}
	tcpFlags  = map[uint64]string{0x01: "fin", 0x02: "syn", 0x04: "rst", 0x08: "psh", 0x10: "ack", 0x20: "urg", 0x40: "ece", 0x80: "cwr"}
)

// layout is what the conditions above a tree node say about the packet's
// headers: which L3 and L4 protocol it carries and where they start.
type layout struct {
	l3, l4   string // "ipv4", "ipv6"; "tcp", "udp", "icmp", "icmpv6"
	quic     bool   // UDP to or from port 443: the payload is QUIC
	l3off    int    // 14, 18 behind one VLAN tag, 14+4n behind n
	vlans    int    // VLAN tags the tests above established
	ihl5     bool   // an IPv4 header without options: L4 at l3off+20
	prog     *bpfprog.Program
	mapTypes map[string]*bpfprog.Map
}

func newLayout(p *bpfprog.Program) layout {
	return layout{l3off: 14, prog: p, mapTypes: p.Maps}
}

func (l layout) l4off() int {
	switch l.l3 {
	case "ipv4", "ipv4+options":
		return l.l3off + 20
	case "ipv6":
		return l.l3off + 40
	}
	return -1
}

// learn returns the layout below a branch side on which c holds (or, with
// holds false, fails).
func (l layout) learn(c *expr, holds bool) layout {
	if c == nil {
		return l
	}
	if c.op == "and" && holds {
		for _, a := range c.args {
			l = l.learn(a, true)
		}
		return l
	}
	if c.op == "!=" {
		c, holds = &expr{op: "==", w: 1, args: c.args}, !holds
	}
	if c.op != "==" || !holds || len(c.args) != 2 || !c.args[1].isConst() {
		return l
	}
	a, v := c.args[0], c.args[1].c
	name := l.fieldName(a)
	if s, ok := l.special(a); (ok && s == "pkt.ip.ihl" && v == 5) || (name == "pkt.ip.ver_ihl" && v == 0x45) {
		l.ihl5 = true
	}
	if tag, ok := l.tagType(name); ok {
		if v == 0x8100 || v == 0x88a8 {
			l.vlans = tag + 1
			l.l3off = 14 + 4*l.vlans
			return l
		}
		switch v {
		case 0x0800:
			l.l3 = "ipv4"
		case 0x86dd:
			l.l3 = "ipv6"
		}
		return l
	}
	switch name {
	case "pkt.eth.type":
		switch v {
		case 0x0800:
			l.l3 = "ipv4"
		case 0x86dd:
			l.l3 = "ipv6"
		}
	case "pkt.ip.proto", "pkt.ipv6.next_hdr":
		switch v {
		case 6:
			l.l4 = "tcp"
		case 17:
			l.l4 = "udp"
		case 1:
			l.l4 = "icmp"
		case 58:
			l.l4 = "icmpv6"
		}
	case "pkt.udp.dport", "pkt.udp.sport":
		l.quic = l.quic || v == 443
	}
	return l
}

// tagType reports the type field that follows VLAN tag n-1 (the Ethernet
// type for n = 0), the last one the tests above established.
func (l layout) tagType(name string) (int, bool) {
	switch {
	case name == "pkt.eth.type":
		return 0, l.vlans == 0
	case name == "pkt.vlan.type":
		return 1, l.vlans == 1
	}
	var i int
	if _, err := fmt.Sscanf(name, "pkt.vlan[%d].type", &i); err == nil && name == fmt.Sprintf("pkt.vlan[%d].type", i) {
		return i + 1, l.vlans == i+1
	}
	return 0, false
}

// isIHL4 recognises the IPv4 header length in bytes, as compilers write
// it: (b << 2) & 60, (b & 15) << 2 or (b & 15) * 4 of the header's first
// byte b.
func isIHL4(r *expr, l3off int) bool {
	first := func(x *expr) bool { return x.op == opPkt && x.sym == nil && len(x.offs) == 1 && x.offs[0] == l3off }
	k := func(x *expr, c uint64) bool { return x.isConst() && x.c == c }
	if r == nil || len(r.args) != 2 {
		return false
	}
	a, b := r.args[0], r.args[1]
	switch r.op {
	case "&":
		return k(b, 60) && a.op == "<<" && len(a.args) == 2 && k(a.args[1], 2) && first(a.args[0])
	case "<<", "*":
		c := uint64(2)
		if r.op == "*" {
			c = 4
		}
		return k(b, c) && a.op == "&" && len(a.args) == 2 && k(a.args[1], 15) && first(a.args[0])
	}
	return false
}

// fieldName names packet bytes in network order by the layout, or "".
func (l layout) fieldName(r *expr) string {
	if r.op != opPkt || !r.ascending() {
		return ""
	}
	off, n := r.offs[0], len(r.offs)
	if r.sym != nil {
		if l.l3 == "ipv6" {
			return l.extName(r)
		}
		// Behind IPv4 options: the offset counts from ihl*4.
		if l.l3 != "ipv4" || !isIHL4(r.sym, l.l3off) {
			return ""
		}
		l.l3 = "ipv4+options"
		off += 20
	} else if l.l3 == "ipv4" && !l.ihl5 && off >= l.l3off+20 {
		return "" // the L4 header starts at ihl*4, not known to be 20
	}
	match := func(base int, fs []field) string {
		for _, f := range fs {
			if base+f.off == off && f.size == n {
				return "pkt." + f.name
			}
		}
		return ""
	}
	if s := match(0, ethFields); s != "" {
		return s
	}
	for i := 0; i < l.vlans; i++ {
		if s := match(4*i, vlanFields); s != "" {
			if i > 0 {
				s = strings.Replace(s, "pkt.vlan.", fmt.Sprintf("pkt.vlan[%d].", i), 1)
			}
			return s
		}
	}
	switch l.l3 {
	case "ipv4":
		if s := match(l.l3off, ipv4Fields); s != "" {
			return s
		}
	case "ipv6":
		if s := match(l.l3off, ipv6Fields); s != "" {
			return s
		}
	}
	if l4 := l.l4off(); l4 > 0 {
		switch l.l4 {
		case "tcp":
			return match(l4, tcpFields)
		case "udp":
			if s := match(l4, udpFields); s != "" || !l.quic {
				return s
			}
			return match(l4+8, quicFields)
		case "icmp", "icmpv6":
			s := match(l4, icmpFields)
			if l.l4 == "icmpv6" {
				s = strings.Replace(s, "icmp.", "icmpv6.", 1)
			}
			return s
		}
	}
	return ""
}

func (l layout) bytesName(r *expr) string {
	if s := l.fieldName(r); s != "" {
		return s
	}
	if r.op == opPkt && r.sym != nil && len(r.offs) > 1 && r.descending() {
		if s := l.fieldName(r.swapped()); s != "" {
			return fmt.Sprintf("le%d(%s)", 8*len(r.offs), s)
		}
	}
	if r.op == opVal && r.sym == nil && r.descending() {
		if m := l.mapTypes[r.name]; m != nil && m.Value != nil {
			lo := r.offs[len(r.offs)-1]
			if f := memberAt(m.Value, lo, len(r.offs)); f != "" {
				return pyIdent(r.name) + ".value." + f
			}
		}
	}
	return rawBytes(r, l)
}

// special names flag tests and nibbles: pkt.tcp.syn, pkt.ip.ihl.
func (l layout) special(r *expr) (string, bool) {
	if (r.op == "!=" || r.op == "==") && len(r.args) == 2 && r.args[1].isConst() && r.args[1].c == 0 {
		a := r.args[0]
		s, ok := l.flag(a)
		if !ok && a.op == "&" && len(a.args) == 2 && a.args[1].isConst() && a.args[1].c == 1 {
			s, ok = l.bitText(a.args[0], 0)
		}
		if ok {
			if r.op == "==" {
				return notText(s), true
			}
			return s, true
		}
	}
	if s, ok := l.flag(r); ok {
		return s, true
	}
	if l.l3 == "ipv4" && isIHL4(r, l.l3off) {
		return "pkt.ip.ihl*4", true
	}
	if s, ok := l.tcpHLen(r); ok && l.l3 == "ipv6" {
		return s, true
	}
	if r.op == "+" && l.l3 == "ipv6" {
		if w, ok := l.extWalk(r); ok {
			s := w.header() + ".off"
			if w.off != 0 {
				s += fmt.Sprintf(" + %d", w.off)
			}
			return s, true
		}
	}
	if len(r.args) == 2 && r.args[1].isConst() {
		name := l.fieldName(r.args[0])
		switch {
		case name == "pkt.ip.ver_ihl" && r.op == "&" && r.args[1].c == 0x0f:
			return "pkt.ip.ihl", true
		case name == "pkt.ip.ver_ihl" && r.op == ">>" && r.args[1].c == 4:
			return "pkt.ip.version", true
		}
	}
	return "", false
}

// flag names a test of TCP flag bits: "pkt.tcp.syn", or for several bits
// "pkt.tcp.fin or pkt.tcp.rst" (any of them set); likewise QUIC's header
// form and fixed bits ("pkt.quic.long_header").
func (l layout) flag(r *expr) (string, bool) {
	if r.op != "&" || len(r.args) != 2 || !r.args[1].isConst() {
		return "", false
	}
	mask := r.args[1].c
	prefix, bits := "pkt.tcp.", tcpFlags
	switch l.fieldName(r.args[0]) {
	case "pkt.tcp.flags":
	case "pkt.tcp.doff_flags":
		if mask > 0xff {
			return "", false
		}
	case "pkt.quic.flags":
		prefix, bits = "pkt.quic.", quicBits
		if mask&^0xc0 != 0 {
			return "", false // the packet type and the short header's bits
		}
	default:
		return "", false
	}
	var names []string
	for bit := uint64(1); bit <= 0x80; bit <<= 1 {
		if mask&bit != 0 {
			names = append(names, prefix+bits[bit])
		}
	}
	if len(names) == 0 {
		return "", false
	}
	s := strings.Join(names, " or ")
	if len(names) > 1 {
		s = "(" + s + ")"
	}
	return s, true
}

// bitText reads bit k of a value built from packet bytes with shifts and
// bitwise operators as a Boolean expression over named bits, such as
// "pkt.tcp.syn and not pkt.tcp.ack" for a SYN-without-ACK test on the TCP
// flags loaded as part of a little-endian word.
func (l layout) bitText(r *expr, k int) (string, bool) {
	if k < 0 {
		return "False", true
	}
	two := len(r.args) == 2
	switch {
	case r.isConst():
		if k < 64 && r.c>>k&1 == 1 {
			return "True", true
		}
		return "False", true
	case r.op == opPkt:
		if k >= 8*len(r.offs) {
			return "False", true
		}
		b := &expr{op: opPkt, w: 8, offs: []int{r.offs[len(r.offs)-1-k/8]}, sym: r.sym}
		switch l.fieldName(b) {
		case "pkt.tcp.flags":
			return "pkt.tcp." + tcpFlags[1<<(k%8)], true
		case "pkt.quic.flags":
			if name, ok := quicBits[1<<(k%8)]; ok {
				return "pkt.quic." + name, true
			}
		}
		return fmt.Sprintf("bit(%s, %d)", l.bytesName(b), k%8), true
	case two && (r.op == ">>" || r.op == "<<") && r.args[1].isConst():
		if r.op == ">>" {
			return l.bitText(r.args[0], k+int(r.args[1].c))
		}
		return l.bitText(r.args[0], k-int(r.args[1].c))
	case two && (r.op == "&" || r.op == "|" || r.op == "^"):
		a, ok1 := l.bitText(r.args[0], k)
		b, ok2 := l.bitText(r.args[1], k)
		if !ok1 || !ok2 {
			return "", false
		}
		return boolOp(r.op, a, b), true
	}
	return "", false
}
