package pcapng

import (
	"bytes"
	"fmt"
	"io"
	"runtime"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// Packet is one captured Ethernet frame.
type Packet struct {
	Time    time.Time
	Iface   string
	Out     bool // sent by the component; false: received
	OrigLen int  // length on the wire
	Data    []byte
}

// InterfaceName is the name of the pcapng interface of iface in a
// direction.
func InterfaceName(iface string, out bool) string {
	if out {
		return iface + "_out"
	}
	return iface + "_in"
}

// Section is a reusable writer of sections for one component.
type Section struct {
	Label   string // written as the section comment
	SnapLen int    // written in every interface description
	buf     bytes.Buffer
	// Interfaces keep their identifiers from section to section (every
	// section declares all interfaces seen so far, in the same order):
	// Wireshark 4.0 names packets after the first section's interfaces.
	order []string
	ids   map[string]int
}

// Write writes one section holding pkts, in their order, to w with a
// single Write call. It writes nothing for an empty pkts.
func (s *Section) Write(w io.Writer, pkts []Packet) error {
	if len(pkts) == 0 {
		return nil
	}
	s.buf.Reset()
	if s.ids == nil {
		s.ids = map[string]int{}
	}
	for _, p := range pkts {
		name := InterfaceName(p.Iface, p.Out)
		if _, ok := s.ids[name]; !ok {
			s.ids[name] = len(s.order)
			s.order = append(s.order, name)
		}
	}
	intf := func(name string) pcapgo.NgInterface {
		return pcapgo.NgInterface{Name: name, OS: runtime.GOOS, LinkType: layers.LinkTypeEthernet,
			SnapLength: uint32(max(s.SnapLen, 0)), TimestampResolution: 9}
	}
	opts := pcapgo.NgWriterOptions{SectionInfo: pcapgo.NgSectionInfo{
		Hardware: runtime.GOARCH, OS: runtime.GOOS, Application: "dpperf record", Comment: s.Label}}
	ng, err := pcapgo.NewNgWriterInterface(&s.buf, intf(s.order[0]), opts)
	if err != nil {
		return fmt.Errorf("pcapng: start section: %w", err)
	}
	for _, name := range s.order[1:] {
		if _, err := ng.AddInterface(intf(name)); err != nil {
			return fmt.Errorf("pcapng: add interface %s: %w", name, err)
		}
	}
	for _, p := range pkts {
		id := s.ids[InterfaceName(p.Iface, p.Out)]
		dir := pcapgo.NgEpbFlagDirectionInbound
		if p.Out {
			dir = pcapgo.NgEpbFlagDirectionOutbound
		}
		ci := gopacket.CaptureInfo{Timestamp: p.Time, CaptureLength: len(p.Data), Length: max(p.OrigLen, len(p.Data)), InterfaceIndex: id}
		if err := ng.WritePacketWithOptions(ci, p.Data, pcapgo.NgPacketOptions{Flags: &pcapgo.NgEpbFlags{Direction: dir}}); err != nil {
			return fmt.Errorf("pcapng: write packet: %w", err)
		}
	}
	if err := ng.Flush(); err != nil {
		return fmt.Errorf("pcapng: flush section: %w", err)
	}
	_, err = w.Write(s.buf.Bytes())
	return err
}
