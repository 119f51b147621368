package perfiface

import "testing"

func pktBytes(offs ...int) *expr { return &expr{op: opPkt, w: 8 * len(offs), offs: offs} }
func konst(c uint64) *expr       { return &expr{op: opConst, w: 64, c: c} }

// TestLayoutQUIC names QUIC header fields and bits once a test has put
// the packet on UDP port 443, and not before.
func TestLayoutQUIC(t *testing.T) {
	l := layout{l3off: 14}
	l = l.learn(&expr{op: "==", w: 1, args: []*expr{pktBytes(12, 13), konst(0x0800)}}, true)
	l = l.learn(&expr{op: "==", w: 1, args: []*expr{pktBytes(23), konst(17)}}, true)
	if got := l.fieldName(pktBytes(36, 37)); got != "" {
		t.Errorf("bytes 36..37 named %q before the IPv4 header is known to have no options", got)
	}
	l = l.learn(&expr{op: "==", w: 1, args: []*expr{pktBytes(14), konst(0x45)}}, true)
	const payload = 14 + 20 + 8
	first := pktBytes(payload)
	if got := l.fieldName(first); got != "" {
		t.Errorf("UDP payload named %q before any port test", got)
	}
	dport := &expr{op: "==", w: 1, args: []*expr{pktBytes(36, 37), konst(443)}}
	if q := l.learn(dport, false); q.quic {
		t.Error("a failed port test made the payload QUIC")
	}
	l = l.learn(dport, true)
	for _, c := range []struct {
		r    *expr
		want string
	}{
		{first, "pkt.quic.flags"},
		{pktBytes(payload+1, payload+2, payload+3, payload+4), "pkt.quic.version"},
		{pktBytes(payload + 5), "pkt.quic.dcid_len"},
		{pktBytes(36, 37), "pkt.udp.dport"},
	} {
		if got := l.fieldName(c.r); got != c.want {
			t.Errorf("offsets %v: %q, want %q", c.r.offs, got, c.want)
		}
	}
	for _, c := range []struct {
		mask uint64
		want string
		ok   bool
	}{{0x80, "pkt.quic.long_header", true}, {0x40, "pkt.quic.fixed_bit", true},
		{0xc0, "(pkt.quic.fixed_bit or pkt.quic.long_header)", true}, {0x30, "", false}} {
		got, ok := l.flag(&expr{op: "&", w: 8, args: []*expr{first, konst(c.mask)}})
		if got != c.want || ok != c.ok {
			t.Errorf("flags & %#x: %q (%v), want %q (%v)", c.mask, got, ok, c.want, c.ok)
		}
	}
	if got, ok := l.bitText(first, 7); !ok || got != "pkt.quic.long_header" {
		t.Errorf("bit 7 of the first byte: %q", got)
	}
}
