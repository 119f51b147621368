package symex

import "strings"

// WellFormedSummary says in a few words what Options.WellFormed requires
// of a packet, for reports.
const WellFormedSummary = "IPv4 ihl >= 5, lengths consistent"

// Well-formed packets
//
// With Options.WellFormed every solver of a Checker starts with
// assertions over the received packet (the array pkt0 and its length len)
// that parse its headers as a host's stack does and require them to be
// valid. Each requirement holds only when the header is there, as the
// EtherType and protocol fields say:
//
//	Ethernet   at least 14 bytes. An EtherType of 0x8100 (802.1Q) or
//	           0x88a8 (802.1ad) announces a VLAN tag of 4 bytes, which must
//	           be there; up to two tags are parsed, a third leaves the rest
//	           of the packet unconstrained.
//	IPv4       (EtherType 0x0800) the 20-byte header is there; version 4;
//	           ihl >= 5; total length >= ihl*4; the L2 header plus the
//	           total length is at most the packet length (the rest is
//	           Ethernet padding, as in a minimum-size frame: a stack trims
//	           it, as Linux's ip_rcv does).
//	IPv6       (EtherType 0x86dd) the 40-byte header is there; version 6;
//	           the L2 header, 40 and the payload length are at most the
//	           packet length.
//	UDP        (IPv4 protocol or IPv6 next header 17; for IPv4 only the
//	           first fragment, fragment offset 0) the 8-byte header fits in
//	           the IP payload and its length field is at least 8; in a
//	           datagram that is not fragmented (no more-fragments flag) the
//	           length equals the IP payload length, as senders write it.
//	TCP        (protocol or next header 6; IPv4: fragment offset 0) data
//	           offset >= 5 and the header (data offset * 4 bytes) fits in
//	           the IP payload.
//
// IPv6 extension headers, IPv4 options and later fragments are not
// parsed: what follows them is unconstrained. The assertions only remove
// packets, so a bound with them is at least the bound without.

// ethVLAN and ethVLANAD are the EtherTypes of a VLAN tag (802.1Q,
// 802.1ad); ethIPv4 and ethIPv6 those of the IP headers.
const (
	ethVLAN   = 0x8100
	ethVLANAD = 0x88a8
	ethIPv4   = 0x0800
	ethIPv6   = 0x86dd
	// maxVLANTags is how many VLAN tags wellFormed parses.
	maxVLANTags = 2
)

// wellFormed returns the assertions of Options.WellFormed (see above).
func wellFormed() []string {
	out := []string{"(assert " + lenAtLeast(14) + ")"}
	for tags := 0; tags <= maxVLANTags; tags++ {
		l3 := 14 + 4*tags
		var tagged []string // the first tags EtherTypes announce VLAN tags
		for i := 0; i < tags; i++ {
			e := pktHalf(12 + 4*i)
			tagged = append(tagged, "(or (= "+e+" "+halfConst(ethVLAN)+") (= "+e+" "+halfConst(ethVLANAD)+"))")
		}
		if tags > 0 {
			out = append(out, "(assert (=> "+conj(tagged...)+" "+lenAtLeast(l3)+"))")
		}
		etype := pktHalf(12 + 4*tags)
		ip4 := conj(append(tagged, "(= "+etype+" "+halfConst(ethIPv4)+")")...)
		ip6 := conj(append(tagged, "(= "+etype+" "+halfConst(ethIPv6)+")")...)
		out = append(out,
			"(assert (=> "+ip4+" "+wellFormedIPv4(l3)+"))",
			"(assert (=> "+ip6+" "+wellFormedIPv6(l3)+"))")
	}
	return out
}

// wellFormedIPv4 requires a valid IPv4 header at byte o and a valid
// transport header after it.
func wellFormedIPv4(o int) string {
	b0 := pktByte(pktIndex(o))
	ihl := "((_ extract 3 0) " + b0 + ")"
	frag := pktHalf(o + 6)
	return conj(
		lenAtLeast(o+20),
		"(= ((_ extract 7 4) "+b0+") #x4)",
		"(bvuge "+ihl+" #x5)",
		// hl: header length, tot: total length (16 bits)
		"(let ((hl (bvmul #x0004 ((_ zero_extend 12) "+ihl+"))) (tot "+pktHalf(o+2)+")) "+conj(
			"(bvuge tot hl)",
			"(bvule (bvadd "+lenConst(o)+" ((_ zero_extend 48) tot)) len)",
			"(=> (= (bvand "+frag+" #x1fff) #x0000) "+
				"(let ((pl (bvsub tot hl)) (l4 (bvadd "+pktIndex(o)+" ((_ zero_extend 16) hl)))) "+
				wellFormedTransport(pktByte(pktIndex(o+9)), "(= (bvand "+frag+" #x2000) #x0000)")+"))",
		)+")",
	)
}

// wellFormedIPv6 requires a valid IPv6 header at byte o and a valid
// transport header right after it.
func wellFormedIPv6(o int) string {
	return conj(
		lenAtLeast(o+40),
		"(= ((_ extract 7 4) "+pktByte(pktIndex(o))+") #x6)",
		"(bvule (bvadd "+lenConst(o+40)+" ((_ zero_extend 48) "+pktHalf(o+4)+")) len)",
		"(let ((pl "+pktHalf(o+4)+") (l4 "+pktIndex(o+40)+")) "+wellFormedTransport(pktByte(pktIndex(o+6)), "true")+")",
	)
}

// wellFormedTransport requires a valid UDP or TCP header, as proto says,
// at the 32-bit index l4 of an IP payload of pl bytes (16 bits); whole
// says the payload is the whole datagram (not a first fragment). l4 and
// pl are names bound by the caller.
func wellFormedTransport(proto, whole string) string {
	at := func(k int) string { return "(bvadd l4 " + pktIndex(k) + ")" }
	ulen := "(concat " + pktByte(at(4)) + " " + pktByte(at(5)) + ")"
	doff := "((_ extract 7 4) " + pktByte(at(12)) + ")"
	udp := conj("(bvuge pl #x0008)", "(bvuge "+ulen+" #x0008)", "(=> "+whole+" (= "+ulen+" pl))")
	tcp := conj("(bvuge pl #x0014)", "(bvuge "+doff+" #x5)", "(bvule (bvmul #x0004 ((_ zero_extend 12) "+doff+")) pl)")
	return conj("(=> (= "+proto+" #x11) "+udp+")", "(=> (= "+proto+" #x06) "+tcp+")")
}

// conj is the conjunction of terms (true for none).
func conj(terms ...string) string {
	switch len(terms) {
	case 0:
		return "true"
	case 1:
		return terms[0]
	}
	return "(and " + strings.Join(terms, " ") + ")"
}

// pktIndex is a constant packet index (32 bits).
func pktIndex(i int) string { return hexConst(8, uint64(i)) }

// halfConst is a 16-bit constant, as wide as a pktHalf field.
func halfConst(v int) string { return hexConst(4, uint64(v)) }

// lenConst is a 64-bit constant, as wide as len.
func lenConst(v int) string { return hexConst(16, uint64(v)) }

// lenAtLeast says the packet has at least n bytes.
func lenAtLeast(n int) string { return "(bvuge len " + lenConst(n) + ")" }

// pktByte is the received packet's byte at the 32-bit index i.
func pktByte(i string) string { return "(select pkt0 " + i + ")" }

// pktHalf is the big-endian 16-bit field at byte o of the received packet.
func pktHalf(o int) string {
	return "(concat " + pktByte(pktIndex(o)) + " " + pktByte(pktIndex(o+1)) + ")"
}
