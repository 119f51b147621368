package bound

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// packetsToDecode are well-formed and malformed packets as searches
// produce them.
func packetsToDecode(t *testing.T) map[string][]byte {
	t.Helper()
	ser := func(ls ...gopacket.SerializableLayer) []byte {
		buf := gopacket.NewSerializeBuffer()
		if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, ls...); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	eth := func(typ layers.EthernetType) *layers.Ethernet {
		return &layers.Ethernet{SrcMAC: []byte{2, 0, 0, 0, 0, 1}, DstMAC: []byte{2, 0, 0, 0, 0, 2}, EthernetType: typ}
	}
	ip4 := &layers.IPv4{Version: 4, IHL: 5, TTL: 64, Protocol: layers.IPProtocolUDP, SrcIP: []byte{10, 0, 0, 1}, DstIP: []byte{10, 0, 0, 2}}
	udp := &layers.UDP{SrcPort: 1234, DstPort: 53}
	udp.SetNetworkLayerForChecksum(ip4)
	ip6 := &layers.IPv6{Version: 6, HopLimit: 9, NextHeader: layers.IPProtocolTCP, SrcIP: make([]byte, 16), DstIP: append(make([]byte, 15), 1)}
	tcp := &layers.TCP{SrcPort: 80, DstPort: 443, SYN: true, DataOffset: 5}
	tcp.SetNetworkLayerForChecksum(ip6)
	pkts := map[string][]byte{
		"udp4": ser(eth(layers.EthernetTypeIPv4), ip4, udp, gopacket.Payload(make([]byte, 30))),
		"tcp6": ser(eth(layers.EthernetTypeIPv6), ip6, tcp),
	}
	// IPv4 whose options run past its header, protocol UDP: gopacket
	// fails inside the header.
	bad := append([]byte(nil), pkts["udp4"]...)
	bad[14] = 0x48 // ihl 8
	bad = append(bad[:34], append([]byte{8, 8, 8, 8}, bad[34:]...)...)
	bad = append(bad, make([]byte, 40)...)
	pkts["ip4-bad-options"] = bad
	// IPv4 with ihl 0.
	zero := append([]byte(nil), pkts["udp4"]...)
	zero[14] = 0x40
	pkts["ip4-ihl0"] = zero
	return pkts
}

// TestDecodeAgreesWithTshark: the decoded protocol numbers and addresses
// are those tshark reads from the same bytes, malformed headers included
// (a decode once named the protocol of a UDP packet IPv6HopByHop).
func TestDecodeAgreesWithTshark(t *testing.T) {
	dir := t.TempDir()
	num := regexp.MustCompile(`(?:proto|next) (?:\S+ )?\(?(\d+)\)?`)
	for name, pkt := range packetsToDecode(t) {
		path := filepath.Join(dir, name+".pcap")
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		w := pcapgo.NewWriter(f)
		if err := w.WriteFileHeader(65535, layers.LinkTypeEthernet); err != nil {
			t.Fatal(err)
		}
		if err := w.WritePacket(gopacket.CaptureInfo{CaptureLength: len(pkt), Length: len(pkt)}, pkt); err != nil {
			t.Fatal(err)
		}
		f.Close()
		out, err := exec.Command("tshark", "-r", path, "-T", "fields", "-E", "separator=,", "-e", "ip.proto", "-e", "ip.src", "-e", "ipv6.nxt", "-e", "ipv6.dst").Output()
		if err != nil {
			t.Fatalf("tshark: %v", err)
		}
		fields := strings.Split(strings.TrimSpace(string(out)), ",")
		proto, src, nxt, dst6 := fields[0], fields[1], fields[2], fields[3]
		dec := strings.Join(Decode(pkt), "\n")
		var ours string
		if m := num.FindStringSubmatch(dec); m != nil {
			ours = m[1]
		}
		switch {
		case proto != "" && (ours != proto || !strings.Contains(dec, src)):
			t.Errorf("%s: tshark reads proto %s from %s; we decode %q", name, proto, src, dec)
		case nxt != "" && (ours != nxt || !strings.Contains(dec, dst6)):
			t.Errorf("%s: tshark reads next header %s to %s; we decode %q", name, nxt, dst6, dec)
		case proto == "" && nxt == "" && (!strings.Contains(dec, "(malformed)") || ours != "17"):
			// tshark gives up on a header it finds bogus (ihl 0) and
			// fills no field; the decode must say malformed and still
			// show the bytes' protocol.
			t.Errorf("%s: tshark reads no IP header; we decode %q", name, dec)
		}
	}
}
