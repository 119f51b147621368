package perfiface

import (
	"fmt"
	"strings"

	"github.com/cilium/ebpf/btf"

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
		{12, 1, "tcp.doff"}, {13, 1, "tcp.flags"}, {14, 2, "tcp.window"}, {16, 2, "tcp.csum"}, {18, 2, "tcp.urg_ptr"}}
	udpFields  = []field{{0, 2, "udp.sport"}, {2, 2, "udp.dport"}, {4, 2, "udp.len"}, {6, 2, "udp.csum"}}
	icmpFields = []field{{0, 1, "icmp.type"}, {1, 1, "icmp.code"}, {2, 2, "icmp.csum"}, {4, 2, "icmp.id"}, {6, 2, "icmp.seq"}}
	tcpFlags   = map[uint64]string{0x01: "fin", 0x02: "syn", 0x04: "rst", 0x08: "psh", 0x10: "ack", 0x20: "urg", 0x40: "ece", 0x80: "cwr"}
)

// layout is what the conditions above a tree node say about the packet's
// headers: which L3 and L4 protocol it carries and where they start.
type layout struct {
	l3, l4   string // "ipv4", "ipv6"; "tcp", "udp", "icmp", "icmpv6"
	l3off    int    // 14, or 18 behind one VLAN tag
	prog     *bpfprog.Program
	mapTypes map[string]*bpfprog.Map
}

func newLayout(p *bpfprog.Program) layout {
	return layout{l3off: 14, prog: p, mapTypes: p.Maps}
}

func (l layout) l4off() int {
	switch l.l3 {
	case "ipv4":
		return l.l3off + 20
	case "ipv6":
		return l.l3off + 40
	}
	return -1
}

// learn returns the layout below a branch side on which c holds (or, with
// holds false, fails).
func (l layout) learn(c *rx, holds bool) layout {
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
		c, holds = &rx{op: "==", w: 1, args: c.args}, !holds
	}
	if c.op != "==" || !holds || len(c.args) != 2 || !c.args[1].isConst() {
		return l
	}
	a, v := c.args[0], c.args[1].c
	name := l.fieldName(a)
	switch name {
	case "pkt.eth.type", "pkt.vlan.type":
		if name == "pkt.eth.type" && (v == 0x8100 || v == 0x88a8) {
			l.l3off = 18
		}
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
	}
	return l
}

// fieldName names packet bytes in network order by the layout, or "".
func (l layout) fieldName(r *rx) string {
	if r.op != opPkt || r.sym != nil || !r.ascending() {
		return ""
	}
	off, n := r.offs[0], len(r.offs)
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
	if l.l3off == 18 {
		if s := match(0, vlanFields); s != "" {
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
			return match(l4, udpFields)
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

func (l layout) bytesName(r *rx) string {
	if s := l.fieldName(r); s != "" {
		return s
	}
	if r.op == opVal && r.sym == nil && r.descending() {
		if m := l.mapTypes[r.name]; m != nil && m.Value != nil {
			lo := r.offs[len(r.offs)-1]
			if f := memberAt(m.Value, lo, len(r.offs)); f != "" {
				return r.name + ".value." + f
			}
		}
	}
	return rawBytes(r)
}

// keyText prints a lookup key: the packet fields it copies, by the key
// struct's member names when the object has BTF.
func (l layout) keyText(mapName string, key *rx) string {
	one := func(v *rx) string {
		if v.op == opPkt && v.descending() {
			if s := l.fieldName(v.swapped()); s != "" {
				return s
			}
		}
		return render(v, l)
	}
	m := l.mapTypes[mapName]
	if m == nil || m.Key == nil {
		return one(key)
	}
	st, ok := btf.UnderlyingType(m.Key).(*btf.Struct)
	if !ok {
		return one(key)
	}
	var parts []string
	for _, mem := range st.Members {
		size, err := btf.Sizeof(mem.Type)
		if err != nil || mem.Offset%8 != 0 || mem.BitfieldSize != 0 {
			return one(key)
		}
		lo := int(mem.Offset / 8)
		if 8*(lo+size) > key.w {
			break
		}
		parts = append(parts, fmt.Sprintf("%s=%s", mem.Name, one(extract(key, 8*(lo+size)-1, 8*lo))))
	}
	return strings.Join(parts, ", ")
}

// memberAt names the struct member at a byte offset and size.
func memberAt(t btf.Type, off, size int) string {
	st, ok := btf.UnderlyingType(t).(*btf.Struct)
	if !ok {
		return ""
	}
	for _, mem := range st.Members {
		s, err := btf.Sizeof(mem.Type)
		if err != nil || mem.Offset%8 != 0 {
			continue
		}
		lo := int(mem.Offset / 8)
		if lo == off && s == size {
			return mem.Name
		}
		if lo <= off && off+size <= lo+s {
			if inner := memberAt(mem.Type, off-lo, size); inner != "" {
				return mem.Name + "." + inner
			}
		}
	}
	return ""
}

// special names flag tests and nibbles: pkt.tcp.syn, pkt.ip.ihl.
func (l layout) special(r *rx) (string, bool) {
	if (r.op == "!=" || r.op == "==") && len(r.args) == 2 && r.args[1].isConst() && r.args[1].c == 0 {
		if s, ok := l.flag(r.args[0]); ok {
			if r.op == "==" {
				return "not " + s, true
			}
			return s, true
		}
	}
	if s, ok := l.flag(r); ok {
		return s, true
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

func (l layout) flag(r *rx) (string, bool) {
	if r.op != "&" || len(r.args) != 2 || !r.args[1].isConst() {
		return "", false
	}
	if l.fieldName(r.args[0]) == "pkt.tcp.flags" {
		if f, ok := tcpFlags[r.args[1].c]; ok {
			return "pkt.tcp." + f, true
		}
	}
	return "", false
}
