package inputs

import (
	"encoding/binary"
	"math/rand/v2"
	"net"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// Address and port pools: packets draw from them and the starting maps
// hold some of them, so map lookups both hit and miss.
var (
	ip4Pool  = []net.IP{{10, 0, 0, 1}, {10, 0, 0, 2}, {192, 168, 1, 7}, {172, 16, 0, 9}, {0, 0, 0, 0}}
	ip6Pool  = []net.IP{net.ParseIP("2001:db8::1"), net.ParseIP("2001:db8::2"), net.ParseIP("fe80::7"), net.IPv6zero}
	macPool  = []net.HardwareAddr{{0, 1, 2, 3, 4, 5}, {0x02, 0, 0, 0, 0, 1}, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff}}
	portPool = []uint16{0, 9, 22, 23, 53, 80, 135, 443, 445, 6000, 6063, 6064, 8080}
)

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

// craft builds a packet from gopacket layers: Ethernet, optionally VLAN,
// IPv4 or IPv6 (or another ethertype), then TCP, UDP or ICMP, with a random
// payload.
func craft(r *rand.Rand) []byte {
	eth := &layers.Ethernet{SrcMAC: pick(r, macPool), DstMAC: pick(r, macPool)}
	var ls []gopacket.SerializableLayer
	ls = append(ls, eth)
	setType := func(t layers.EthernetType) { eth.EthernetType = t }
	if r.IntN(5) == 0 {
		vlan := &layers.Dot1Q{VLANIdentifier: uint16(r.IntN(4096))}
		eth.EthernetType = layers.EthernetTypeDot1Q
		ls = append(ls, vlan)
		setType = func(t layers.EthernetType) { vlan.Type = t }
	}
	var netl gopacket.NetworkLayer
	var proto layers.IPProtocol
	switch r.IntN(9) {
	case 0:
		setType(layers.EthernetType(r.IntN(0x10000)))
	case 1, 2, 3, 4:
		ip := &layers.IPv4{Version: 4, IHL: 5, TTL: 64, SrcIP: pick(r, ip4Pool), DstIP: pick(r, ip4Pool)}
		if r.IntN(8) == 0 {
			ip.Options = []layers.IPv4Option{{OptionType: 1}, {OptionType: 1}, {OptionType: 1}, {OptionType: 0}}
		}
		if r.IntN(10) == 0 {
			ip.Flags, ip.FragOffset = layers.IPv4MoreFragments, uint16(r.IntN(100))
		}
		setType(layers.EthernetTypeIPv4)
		ls, netl = append(ls, ip), ip
		proto = pick(r, []layers.IPProtocol{layers.IPProtocolTCP, layers.IPProtocolUDP, layers.IPProtocolICMPv4, 47})
		ip.Protocol = proto
	default:
		ip := &layers.IPv6{Version: 6, HopLimit: 64, SrcIP: pick(r, ip6Pool), DstIP: pick(r, ip6Pool)}
		setType(layers.EthernetTypeIPv6)
		ls, netl = append(ls, ip), ip
		proto = pick(r, []layers.IPProtocol{layers.IPProtocolTCP, layers.IPProtocolUDP, layers.IPProtocolICMPv6, 59, 45})
		ip.NextHeader = proto
	}
	switch proto {
	case layers.IPProtocolTCP:
		tcp := &layers.TCP{SrcPort: layers.TCPPort(pick(r, portPool)), DstPort: layers.TCPPort(pick(r, portPool)),
			Seq: r.Uint32(), DataOffset: 5, SYN: r.IntN(2) == 0, ACK: r.IntN(2) == 0, RST: r.IntN(8) == 0, Window: 512}
		tcp.SetNetworkLayerForChecksum(netl)
		ls = append(ls, tcp)
	case layers.IPProtocolUDP:
		udp := &layers.UDP{SrcPort: layers.UDPPort(pick(r, portPool)), DstPort: layers.UDPPort(pick(r, portPool))}
		udp.SetNetworkLayerForChecksum(netl)
		ls = append(ls, udp)
	case layers.IPProtocolICMPv4:
		ls = append(ls, &layers.ICMPv4{TypeCode: layers.CreateICMPv4TypeCode(uint8(r.IntN(16)), 0)})
	case layers.IPProtocolICMPv6:
		icmp := &layers.ICMPv6{TypeCode: layers.CreateICMPv6TypeCode(uint8(pick(r, []int{1, 2, 128, 129, 135})), 0)}
		icmp.SetNetworkLayerForChecksum(netl)
		ls = append(ls, icmp)
	}
	payload := make([]byte, pick(r, []int{0, 1, 6, 18, 40, 100, 400, 1400, 1500}))
	for i := range payload {
		payload[i] = byte(r.IntN(256))
	}
	ls = append(ls, gopacket.Payload(payload))
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: r.IntN(4) != 0}, ls...); err != nil {
		panic(err)
	}
	pkt := buf.Bytes()
	if r.IntN(4) == 0 && len(pkt) > 14 { // truncated
		pkt = pkt[:14+r.IntN(len(pkt)-14)]
	}
	return pkt
}

// random is random bytes behind an Ethernet header that is often IPv4 or
// IPv6.
func random(r *rand.Rand) []byte {
	pkt := make([]byte, 14+r.IntN(300))
	for i := range pkt {
		pkt[i] = byte(r.IntN(256))
	}
	switch r.IntN(3) {
	case 0:
		binary.BigEndian.PutUint16(pkt[12:], 0x0800)
	case 1:
		binary.BigEndian.PutUint16(pkt[12:], 0x86dd)
	}
	return pkt
}

// SelftestV4 is test_progs' pkt_v4, which test_xdp_noinline's load balancer
// is keyed to: IPv4 TCP, zero addresses and ports, tot_len and urg_ptr 123.
func SelftestV4() []byte {
	pkt := make([]byte, 54)
	binary.BigEndian.PutUint16(pkt[12:], 0x0800)
	pkt[14] = 0x45
	binary.BigEndian.PutUint16(pkt[16:], 123)
	pkt[23] = 6
	pkt[14+20+12] = 5 << 4
	binary.BigEndian.PutUint16(pkt[14+20+18:], 123)
	return pkt
}

// Packets returns n packets: crafted, random and the selftest packet.
func Packets(seed uint64, n int) [][]byte {
	r := rand.New(rand.NewPCG(seed, 7))
	out := [][]byte{SelftestV4()}
	for len(out) < n {
		if r.IntN(4) == 0 {
			out = append(out, random(r))
		} else {
			out = append(out, craft(r))
		}
	}
	return out
}
