package workload

import (
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// Config sets the size and mix of a trace; zero fields take defaults.
type Config struct {
	Seed uint64
	// TCPFlows and UDPFlows are the flows opened (half of each IPv6);
	// each TCP flow carries SYN, 1..EstPackets established packets and a
	// FIN, each UDP flow 1..2*EstPackets datagrams.
	TCPFlows, UDPFlows, EstPackets int
	// Stray is the number of TCP segments of flows never opened; ICMP the
	// number of ICMP/ICMPv6 echoes; Other the number of ARP requests;
	// Malformed the number of malformed frames.
	Stray, ICMP, Other, Malformed int
	// Start is the first timestamp; packets are Gap apart.
	Start time.Time
	Gap   time.Duration
}

func (c *Config) defaults() {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&c.TCPFlows, 60)
	def(&c.UDPFlows, 40)
	def(&c.EstPackets, 8)
	def(&c.Stray, 40)
	def(&c.ICMP, 40)
	def(&c.Other, 20)
	def(&c.Malformed, 20)
	if c.Start.IsZero() {
		c.Start = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	if c.Gap == 0 {
		c.Gap = 10 * time.Microsecond
	}
}

// Kinds of generated packets.
const (
	TCPSyn    = "tcp-syn"
	TCPEst    = "tcp-established"
	TCPFin    = "tcp-fin"
	TCPStray  = "tcp-stray"
	UDP       = "udp"
	ICMP      = "icmp"
	ARP       = "arp"
	Malformed = "malformed"
)

// Packet is one generated frame.
type Packet struct {
	Time time.Time
	Data []byte
	Kind string // one of the kinds above
	IPv6 bool
}

// flow is a 5-tuple with its remaining packets.
type flow struct {
	v6               bool
	tcp              bool
	src, dst         net.IP
	sport, dport     uint16
	left             int
	opened, finished bool
}

// Generate builds the trace. Flows interleave: at each step a random live
// flow (or a one-off packet) sends its next packet.
func Generate(c Config) []Packet {
	c.defaults()
	r := rand.New(rand.NewPCG(c.Seed, 0x5eed))
	var live []*flow
	newFlow := func(tcp, v6 bool) *flow {
		f := &flow{v6: v6, tcp: tcp, sport: uint16(1024 + r.IntN(60000)), dport: []uint16{80, 443, 53, 8080, 22}[r.IntN(5)]}
		f.src, f.dst = addr(r, v6, true), addr(r, v6, false)
		if tcp {
			f.left = 1 + r.IntN(c.EstPackets)
		} else {
			f.left = 1 + r.IntN(2*c.EstPackets)
		}
		return f
	}
	for i := range c.TCPFlows {
		live = append(live, newFlow(true, i%2 == 1))
	}
	for i := range c.UDPFlows {
		live = append(live, newFlow(false, i%2 == 1))
	}
	type oneOff struct{ kind string }
	var singles []oneOff
	for range c.Stray {
		singles = append(singles, oneOff{TCPStray})
	}
	for range c.ICMP {
		singles = append(singles, oneOff{ICMP})
	}
	for range c.Other {
		singles = append(singles, oneOff{ARP})
	}
	for range c.Malformed {
		singles = append(singles, oneOff{Malformed})
	}
	var out []Packet
	for len(live) > 0 || len(singles) > 0 {
		var p Packet
		if n := r.IntN(len(live) + len(singles)); n < len(live) {
			f := live[n]
			p = f.next(r)
			if f.finished {
				live = append(live[:n], live[n+1:]...)
			}
		} else {
			n -= len(live)
			p = single(r, singles[n].kind, r.IntN(2) == 1)
			singles = append(singles[:n], singles[n+1:]...)
		}
		p.Time = c.Start.Add(time.Duration(len(out)) * c.Gap)
		out = append(out, p)
	}
	return out
}

// addr draws a client (from a small pool, so sources repeat) or a server
// address.
func addr(r *rand.Rand, v6, client bool) net.IP {
	n := byte(1 + r.IntN(30))
	switch {
	case v6 && client:
		return net.IP{0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, n}
	case v6:
		return net.IP{0x20, 0x01, 0x0d, 0xb8, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, n % 4}
	case client:
		return net.IP{10, 0, 0, n}
	default:
		return net.IP{192, 168, 0, n % 4}
	}
}

var (
	clientMAC = net.HardwareAddr{0x02, 0, 0, 0, 0, 1}
	serverMAC = net.HardwareAddr{0x02, 0, 0, 0, 0, 2}
)

// next is the flow's next packet: SYN first for TCP, then established
// packets, then a FIN (or RST).
func (f *flow) next(r *rand.Rand) Packet {
	payload := make([]byte, r.IntN(64))
	for i := range payload {
		payload[i] = byte(r.IntN(256))
	}
	if !f.tcp {
		f.left--
		f.finished = f.left == 0
		return Packet{Data: build(f.v6, f.src, f.dst, &layers.UDP{SrcPort: layers.UDPPort(f.sport), DstPort: layers.UDPPort(f.dport)}, payload), Kind: UDP, IPv6: f.v6}
	}
	tcp := &layers.TCP{SrcPort: layers.TCPPort(f.sport), DstPort: layers.TCPPort(f.dport), Seq: r.Uint32(), Window: 1024}
	kind := TCPEst
	switch {
	case !f.opened:
		tcp.SYN, f.opened, payload, kind = true, true, nil, TCPSyn
	case f.left == 0:
		tcp.ACK, payload, kind, f.finished = true, nil, TCPFin, true
		if r.IntN(4) == 0 {
			tcp.RST = true
		} else {
			tcp.FIN = true
		}
	default:
		tcp.ACK, tcp.PSH = true, true
		f.left--
	}
	return Packet{Data: build(f.v6, f.src, f.dst, tcp, payload), Kind: kind, IPv6: f.v6}
}

// single builds a packet that belongs to no flow.
func single(r *rand.Rand, kind string, v6 bool) Packet {
	src, dst := addr(r, v6, true), addr(r, v6, false)
	switch kind {
	case TCPStray:
		tcp := &layers.TCP{SrcPort: layers.TCPPort(1024 + r.IntN(60000)), DstPort: 80, ACK: true, Seq: r.Uint32(), Window: 1024}
		return Packet{Data: build(v6, src, dst, tcp, make([]byte, r.IntN(32))), Kind: kind, IPv6: v6}
	case ICMP:
		if v6 {
			icmp := &layers.ICMPv6{TypeCode: layers.CreateICMPv6TypeCode(layers.ICMPv6TypeEchoRequest, 0)}
			return Packet{Data: build(true, src, dst, icmp, []byte{0, 1, 0, byte(r.IntN(256))}), Kind: kind, IPv6: true}
		}
		icmp := &layers.ICMPv4{TypeCode: layers.CreateICMPv4TypeCode(layers.ICMPv4TypeEchoRequest, 0), Id: 1, Seq: uint16(r.IntN(1000))}
		return Packet{Data: build(false, src, dst, icmp, nil), Kind: kind}
	case ARP:
		arp := &layers.ARP{AddrType: layers.LinkTypeEthernet, Protocol: layers.EthernetTypeIPv4, HwAddressSize: 6, ProtAddressSize: 4,
			Operation: layers.ARPRequest, SourceHwAddress: clientMAC, SourceProtAddress: []byte{10, 0, 0, 1},
			DstHwAddress: make([]byte, 6), DstProtAddress: []byte{10, 0, 0, 2}}
		return Packet{Data: serialize(&layers.Ethernet{SrcMAC: clientMAC, DstMAC: layers.EthernetBroadcast, EthernetType: layers.EthernetTypeARP}, arp), Kind: kind}
	}
	// Malformed: a valid TCP packet cut short, or with a bad IPv4 IHL.
	whole := build(v6, src, dst, &layers.TCP{SrcPort: 40000, DstPort: 80, SYN: true, Window: 1024}, nil)
	switch r.IntN(3) {
	case 0: // header cut inside IP or TCP
		return Packet{Data: whole[:14+r.IntN(len(whole)-15)], Kind: kind, IPv6: v6}
	case 1: // a runt below the Ethernet header: XDP never sees it
		return Packet{Data: whole[:1+r.IntN(13)], Kind: kind, IPv6: v6}
	default:
		if !v6 {
			whole[14] = 0x40 | byte(r.IntN(5))
			return Packet{Data: whole, Kind: kind}
		}
		return Packet{Data: whole[:14+40+r.IntN(20)], Kind: kind, IPv6: true}
	}
}

// build serialises Ethernet, IPv4 or IPv6, l4 and a payload with lengths
// and checksums filled in.
func build(v6 bool, src, dst net.IP, l4 gopacket.SerializableLayer, payload []byte) []byte {
	eth := &layers.Ethernet{SrcMAC: clientMAC, DstMAC: serverMAC}
	var netl gopacket.NetworkLayer
	var ip gopacket.SerializableLayer
	var proto layers.IPProtocol
	switch l4.(type) {
	case *layers.TCP:
		proto = layers.IPProtocolTCP
	case *layers.UDP:
		proto = layers.IPProtocolUDP
	case *layers.ICMPv4:
		proto = layers.IPProtocolICMPv4
	case *layers.ICMPv6:
		proto = layers.IPProtocolICMPv6
	}
	if v6 {
		eth.EthernetType = layers.EthernetTypeIPv6
		l := &layers.IPv6{Version: 6, HopLimit: 64, NextHeader: proto, SrcIP: src, DstIP: dst}
		ip, netl = l, l
	} else {
		eth.EthernetType = layers.EthernetTypeIPv4
		l := &layers.IPv4{Version: 4, IHL: 5, TTL: 64, Protocol: proto, SrcIP: src, DstIP: dst}
		ip, netl = l, l
	}
	switch l := l4.(type) {
	case *layers.TCP:
		l.SetNetworkLayerForChecksum(netl)
	case *layers.UDP:
		l.SetNetworkLayerForChecksum(netl)
	case *layers.ICMPv6:
		l.SetNetworkLayerForChecksum(netl)
	}
	return serialize(eth, ip, l4, gopacket.Payload(payload))
}

func serialize(ls ...gopacket.SerializableLayer) []byte {
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, ls...); err != nil {
		panic(fmt.Sprintf("workload: serialize %v: %v", ls, err)) // only on a bug in this package
	}
	return buf.Bytes()
}

// WritePcap writes packets as a pcap file (Ethernet, microsecond
// timestamps, snap length 65535).
func WritePcap(w io.Writer, pkts []Packet) error {
	pw := pcapgo.NewWriter(w)
	if err := pw.WriteFileHeader(65535, layers.LinkTypeEthernet); err != nil {
		return err
	}
	for _, p := range pkts {
		ci := gopacket.CaptureInfo{Timestamp: p.Time, CaptureLength: len(p.Data), Length: len(p.Data)}
		if err := pw.WritePacket(ci, p.Data); err != nil {
			return err
		}
	}
	return nil
}
