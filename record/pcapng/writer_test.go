package pcapng

import (
	"bytes"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// udpFrame builds an Ethernet/IPv4/UDP frame with payload.
func udpFrame(t *testing.T, src, dst string, sport, dport int, payload []byte) []byte {
	t.Helper()
	eth := &layers.Ethernet{SrcMAC: []byte{2, 0, 0, 0, 0, 1}, DstMAC: []byte{2, 0, 0, 0, 0, 2}, EthernetType: layers.EthernetTypeIPv4}
	ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolUDP, SrcIP: net.ParseIP(src).To4(), DstIP: net.ParseIP(dst).To4()}
	udp := &layers.UDP{SrcPort: layers.UDPPort(sport), DstPort: layers.UDPPort(dport)}
	_ = udp.SetNetworkLayerForChecksum(ip)
	buf := gopacket.NewSerializeBuffer()
	err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, eth, ip, udp, gopacket.Payload(payload))
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestTsharkReadsPeriods(t *testing.T) {
	tshark, err := exec.LookPath("tshark")
	if err != nil {
		t.Fatal("tshark is required (scripts/setup.sh installs it)")
	}
	frame := udpFrame(t, "10.0.1.1", "10.0.2.1", 4000, 5000, bytes.Repeat([]byte("x"), 200))
	const snap = 100
	base := time.Unix(1_700_000_000, 0)
	var file bytes.Buffer
	s := &Section{Label: "pipeline/router", SnapLen: snap}
	// Three periods: the first sees only one interface, the second a new
	// one (tshark must name it, not take the first period's interfaces),
	// the third both in another order.
	if err := s.Write(&file, []Packet{
		{Time: base, Iface: "uplink", OrigLen: len(frame), Data: frame[:snap]},
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.Write(&file, []Packet{
		{Time: base.Add(time.Microsecond), Iface: "downlink", Out: true, OrigLen: len(frame), Data: frame[:snap]},
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.Write(&file, nil); err != nil || file.Len() == 0 {
		t.Fatal("empty section written or failed", err)
	}
	if err := s.Write(&file, []Packet{
		{Time: base.Add(time.Second), Iface: "downlink", Out: true, OrigLen: len(frame), Data: frame[:snap]},
		{Time: base.Add(time.Second + time.Microsecond), Iface: "uplink", OrigLen: 60, Data: frame[:60]},
	}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "router.pcapng")
	if err := os.WriteFile(path, file.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(tshark, "-r", path, "-T", "fields", "-E", "separator=,",
		"-e", "frame.interface_name", "-e", "frame.len", "-e", "frame.cap_len", "-e", "ip.src", "-e", "udp.dstport", "-e", "frame.time_epoch").Output()
	if err != nil {
		t.Fatalf("tshark: %v\n%s", err, out)
	}
	want := []string{
		"uplink_in," + strconv.Itoa(len(frame)) + ",100,10.0.1.1,5000,1700000000.000000000",
		"downlink_out," + strconv.Itoa(len(frame)) + ",100,10.0.1.1,5000,1700000000.000001000",
		"downlink_out," + strconv.Itoa(len(frame)) + ",100,10.0.1.1,5000,1700000001.000000000",
		"uplink_in,60,60,10.0.1.1,5000,1700000001.000001000",
	}
	got := strings.Split(strings.TrimSpace(string(out)), "\n")
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("tshark read\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
