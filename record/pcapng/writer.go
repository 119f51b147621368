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

// Section writes one component's pcapng file: a single section that
// grows by one write per drain period. Interfaces are declared as they
// first appear, before the packets that use them: Wireshark 4.0 names the
// packets of every later section after the first section's interfaces, so
// a new section per period mislabels an interface first seen after the
// first period.
type Section struct {
	Label   string // written as the section comment
	SnapLen int    // written in every interface description
	buf     bytes.Buffer
	ng      *pcapgo.NgWriter
	ids     map[string]int
}

// Write appends pkts, in their order, to the section in w with a single
// Write call (the first call writes the section header too). It writes
// nothing for an empty pkts.
func (s *Section) Write(w io.Writer, pkts []Packet) error {
	if len(pkts) == 0 {
		return nil
	}
	s.buf.Reset()
	intf := func(name string) pcapgo.NgInterface {
		return pcapgo.NgInterface{Name: name, OS: runtime.GOOS, LinkType: layers.LinkTypeEthernet,
			SnapLength: uint32(max(s.SnapLen, 0)), TimestampResolution: 9}
	}
	if s.ng == nil {
		first := InterfaceName(pkts[0].Iface, pkts[0].Out)
		opts := pcapgo.NgWriterOptions{SectionInfo: pcapgo.NgSectionInfo{
			Hardware: runtime.GOARCH, OS: runtime.GOOS, Application: "dpperf record", Comment: s.Label}}
		ng, err := pcapgo.NewNgWriterInterface(&s.buf, intf(first), opts)
		if err != nil {
			return fmt.Errorf("pcapng: start section: %w", err)
		}
		s.ng, s.ids = ng, map[string]int{first: 0}
	}
	for _, p := range pkts {
		name := InterfaceName(p.Iface, p.Out)
		if _, ok := s.ids[name]; !ok {
			id, err := s.ng.AddInterface(intf(name))
			if err != nil {
				return fmt.Errorf("pcapng: add interface %s: %w", name, err)
			}
			s.ids[name] = id
		}
	}
	for _, p := range pkts {
		id := s.ids[InterfaceName(p.Iface, p.Out)]
		dir := pcapgo.NgEpbFlagDirectionInbound
		if p.Out {
			dir = pcapgo.NgEpbFlagDirectionOutbound
		}
		ci := gopacket.CaptureInfo{Timestamp: p.Time, CaptureLength: len(p.Data), Length: max(p.OrigLen, len(p.Data)), InterfaceIndex: id}
		if err := s.ng.WritePacketWithOptions(ci, p.Data, pcapgo.NgPacketOptions{Flags: &pcapgo.NgEpbFlags{Direction: dir}}); err != nil {
			return fmt.Errorf("pcapng: write packet: %w", err)
		}
	}
	if err := s.ng.Flush(); err != nil {
		return fmt.Errorf("pcapng: flush: %w", err)
	}
	_, err := w.Write(s.buf.Bytes())
	return err
}
