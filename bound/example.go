package bound

import (
	"fmt"
	"math"
	"net"
	"sort"
	"strings"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/dpperf/dpperf/smt"
	"github.com/dpperf/dpperf/symex"
)

// Example is an input that drives the program along a reported path.
type Example struct {
	Length  int  `json:"length"`  // bytes
	Minimal bool `json:"minimal"` // no shorter packet takes the path
	// Approx: the solver could not match the path's hashes in time, so the
	// packet may leave the path where the program tests a hash.
	Approx  bool       `json:"approximate,omitempty"`
	Packet  string     `json:"packet"` // hex
	Layers  []string   `json:"layers"` // the packet decoded
	Ifindex uint32     `json:"ingress_ifindex"`
	RxQueue uint32     `json:"rx_queue_index"`
	Verdict uint64     `json:"verdict"` // what the program returns on this path
	Maps    []MapEntry `json:"maps"`    // contents the path needs
	// ClockNs is what the path's first bpf_ktime_get_ns call returns, when
	// it has one.
	ClockNs *uint64 `json:"clock_ns,omitempty"`
	Raw     []byte  `json:"-"`
}

// MapEntry is a map element (or global data) the path needs.
type MapEntry struct {
	Map    string `json:"map"`
	Key    string `json:"key,omitempty"`   // hex, memory order
	Value  string `json:"value,omitempty"` // hex, memory order
	Absent bool   `json:"absent,omitempty"`
	Global bool   `json:"global,omitempty"`
}

func exampleOf(ex *symex.Example) *Example {
	e := &Example{Length: len(ex.Packet), Minimal: ex.Minimal, Approx: ex.Approx, Packet: symex.Hex(ex.Packet), Layers: Decode(ex.Packet),
		Ifindex: ex.Ifindex, RxQueue: ex.RxQueue, Verdict: ex.Verdict, Raw: ex.Packet, Maps: []MapEntry{}}
	if ex.HasClock {
		e.ClockNs = &ex.Clock
	}
	for _, m := range ex.Maps {
		e.Maps = append(e.Maps, MapEntry{Map: m.Map, Key: symex.Hex(m.Key), Value: symex.Hex(m.Value), Absent: m.Absent, Global: m.Global})
	}
	return e
}

// Decode describes a packet layer by layer, as far as gopacket decodes it.
// A layer gopacket could not decode (a worst case often rests on a
// malformed header) is described from its own bytes, field by field as
// they stand, never from the half-filled struct gopacket leaves.
func Decode(data []byte) []string {
	pkt := gopacket.NewPacket(data, layers.LayerTypeEthernet, gopacket.Default)
	el := pkt.ErrorLayer()
	ls := pkt.Layers()
	var out []string
	offset := 0
	for i, l := range ls {
		if l.LayerType() == gopacket.LayerTypeDecodeFailure {
			continue
		}
		failed := el != nil && i+1 < len(ls) && ls[i+1].LayerType() == gopacket.LayerTypeDecodeFailure
		if failed {
			out = append(out, describeRaw(l.LayerType(), data[min(offset, len(data)):]))
			break
		}
		out = append(out, describe(l))
		offset += len(l.LayerContents())
	}
	if el != nil {
		out = append(out, "undecodable: "+el.Error().Error())
	}
	return out
}

// describeRaw reads the fixed header fields of a layer gopacket could not
// decode from its bytes b.
func describeRaw(t gopacket.LayerType, b []byte) string {
	be16 := func(i int) uint16 { return uint16(b[i])<<8 | uint16(b[i+1]) }
	switch {
	case t == layers.LayerTypeIPv4 && len(b) >= 20:
		return fmt.Sprintf("IPv4 (malformed) %s > %s proto %d ihl %d len %d ttl %d", net.IP(b[12:16]), net.IP(b[16:20]), b[9], b[0]&0x0f, be16(2), b[8])
	case t == layers.LayerTypeIPv6 && len(b) >= 40:
		return fmt.Sprintf("IPv6 (malformed) %s > %s next %d len %d hop %d", net.IP(b[8:24]), net.IP(b[24:40]), b[6], be16(4), b[7])
	case t == layers.LayerTypeTCP && len(b) >= 14:
		return fmt.Sprintf("TCP (malformed) %d > %d data offset %d", be16(0), be16(2), b[12]>>4)
	case t == layers.LayerTypeUDP && len(b) >= 8:
		return fmt.Sprintf("UDP (malformed) %d > %d len %d", be16(0), be16(2), be16(4))
	}
	return fmt.Sprintf("%s (malformed) %d B", t, len(b))
}

func describe(l gopacket.Layer) string {
	switch v := l.(type) {
	case *layers.Ethernet:
		return fmt.Sprintf("Ethernet %s > %s type %s (0x%04x)", v.SrcMAC, v.DstMAC, v.EthernetType, uint16(v.EthernetType))
	case *layers.Dot1Q:
		return fmt.Sprintf("802.1Q vlan %d type %s", v.VLANIdentifier, v.Type)
	case *layers.IPv4:
		return fmt.Sprintf("IPv4 %s > %s proto %s (%d) ihl %d len %d ttl %d flags %s frag %d", v.SrcIP, v.DstIP, v.Protocol, uint8(v.Protocol), v.IHL, v.Length, v.TTL, v.Flags, v.FragOffset)
	case *layers.IPv6:
		return fmt.Sprintf("IPv6 %s > %s next %s (%d) len %d hop %d", v.SrcIP, v.DstIP, v.NextHeader, uint8(v.NextHeader), v.Length, v.HopLimit)
	case *layers.TCP:
		return fmt.Sprintf("TCP %d > %d flags %s seq %d", v.SrcPort, v.DstPort, tcpFlags(v), v.Seq)
	case *layers.UDP:
		return fmt.Sprintf("UDP %d > %d len %d", v.SrcPort, v.DstPort, v.Length)
	case *layers.ICMPv4:
		return fmt.Sprintf("ICMPv4 %s", v.TypeCode)
	case *layers.ICMPv6:
		return fmt.Sprintf("ICMPv6 %s", v.TypeCode)
	case gopacket.Payload:
		return fmt.Sprintf("payload %d B", len(v))
	}
	return fmt.Sprintf("%s %d B", l.LayerType(), len(l.LayerContents()))
}

func tcpFlags(t *layers.TCP) string {
	var f []string
	for _, x := range []struct {
		on   bool
		name string
	}{{t.SYN, "S"}, {t.ACK, "A"}, {t.FIN, "F"}, {t.RST, "R"}, {t.PSH, "P"}, {t.URG, "U"}, {t.ECE, "E"}, {t.CWR, "C"}} {
		if x.on {
			f = append(f, x.name)
		}
	}
	if len(f) == 0 {
		return "none"
	}
	return strings.Join(f, "")
}

// finish fills the result of a search.
func (s *search) finish(r *Result, notes map[string]bool) {
	c := s.c
	r.Metric = s.opts.Metric.String()
	r.Kind = "intermediate"
	if s.final {
		r.Kind = "ssp"
	}
	s.stats.Workers = s.opts.Workers
	s.stats.Enumerated = s.ord.Seen
	s.stats.Seconds = time.Since(s.start).Seconds()
	s.stats.Series = s.series
	if s.stats.Series == nil {
		s.stats.Series = []Point{}
	}
	r.Search = &s.stats
	if s.naive != nil {
		nb := c.bound(*s.naive)
		if s.opts.Metric == BitRate {
			nb = c.boundAt(s.naive.Rate, s.naive.Size, c.T.Components[s.naive.Bottleneck].Name)
		}
		r.Naive = &nb
	}
	for n := range notes {
		r.Notes = append(r.Notes, n)
	}
	sort.Strings(r.Notes)

	if s.final && s.bestPath != nil {
		p := *s.bestPath
		size := p.Size
		if s.bestEx != nil && len(s.bestEx.Packet) > size {
			size = len(s.bestEx.Packet)
		}
		cost, lookups := c.OutcomeCost(p.Edges, lookupsOf(s.bestEx))
		exact := c.pathWith(cost, size, s.opts.Metric)
		exact.Edges = p.Edges
		r.Bound = s.boundOf(exact)
		pr := c.report(1, exact)
		if len(c.T.HelperOutcomes) > 0 {
			pr.Lookups = lookups // the outcomes matter only where priced
		}
		pr.Edges = p.Edges
		pr.PacketBytes = size
		pr.BitRate = exact.Rate * float64(8*size)
		pr.Status = "satisfiable"
		if s.bestOut == smt.Unknown {
			pr.Status = "unknown"
		}
		if s.bestEx != nil {
			pr.Example = exampleOf(s.bestEx)
		}
		r.Paths = append(r.Paths, pr)
		return
	}
	// Cut short: the bound is the metric below which every path is refuted.
	v := s.bound
	if math.IsInf(v, 1) || v == 0 {
		if key, ok := s.ord.Peek(); ok {
			v = key
		}
	}
	size := c.T.MinPacket
	if p, ok := s.paths[s.low]; ok {
		size = p.Size
	}
	if s.opts.Metric == BitRate {
		r.Bound = c.boundAt(v/float64(8*size), size, "intermediate")
	} else {
		r.Bound = c.boundAt(v, c.T.MinPacket, "intermediate")
	}
	if r.Paths == nil {
		r.Paths = []PathReport{}
	}
}

// boundOf is the guarantee the SSP gives under the metric.
func (s *search) boundOf(p Path) Bound {
	c := s.c
	name := c.T.Components[p.Bottleneck].Name
	if s.opts.Metric == BitRate {
		return c.boundAt(p.Rate, p.Size, name)
	}
	return c.boundAt(p.Rate, c.T.MinPacket, name)
}
