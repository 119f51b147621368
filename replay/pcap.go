package replay

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/dpperf/dpperf/internal/fail"
)

// Frame is one captured frame.
type Frame struct {
	Time time.Time
	// WireLen is the frame's length on the wire; len(Data) is what was
	// captured (less when the capture's snap length cut it).
	WireLen int
	Data    []byte
}

// Reader reads the Ethernet frames of a pcap or pcapng file, optionally
// gzip-compressed. Errors are input errors naming the file and, past the
// header, the frame.
type Reader struct {
	file  string
	next  func() ([]byte, gopacket.CaptureInfo, error)
	link  func(gopacket.CaptureInfo) layers.LinkType
	count int
}

// Magic numbers of the two formats (pcap in either byte order and either
// timestamp resolution; pcapng's section header block type).
const (
	pcapMicro = 0xa1b2c3d4
	pcapNano  = 0xa1b23c4d
	pcapngSHB = 0x0a0d0d0a
)

// NewReader reads the header of a pcap or pcapng stream; file names it in
// errors.
func NewReader(r io.Reader, file string) (rd *Reader, err error) {
	defer recoverInput(file, &err)
	br := bufio.NewReaderSize(r, 1<<16)
	head, err := br.Peek(4)
	if err != nil {
		return nil, fail.Inputf(file, "not a pcap or pcapng file: %d bytes", len(head))
	}
	rd = &Reader{file: file}
	magic := binary.LittleEndian.Uint32(head)
	switch {
	case magic == pcapngSHB:
		ng, err := pcapgo.NewNgReader(br, pcapgo.NgReaderOptions{WantMixedLinkType: true, SkipUnknownVersion: true})
		if err != nil {
			return nil, fail.Inputf(file, "pcapng header: %v", err)
		}
		rd.next = ng.ReadPacketData
		rd.link = func(ci gopacket.CaptureInfo) layers.LinkType {
			if len(ci.AncillaryData) > 0 {
				if lt, ok := ci.AncillaryData[0].(layers.LinkType); ok {
					return lt
				}
			}
			return ng.LinkType()
		}
	case isPcap(magic) || head[0] == 0x1f && head[1] == 0x8b: // gzip
		pr, err := pcapgo.NewReader(br)
		if err != nil {
			return nil, fail.Inputf(file, "pcap header: %v", err)
		}
		rd.next = pr.ReadPacketData
		lt := pr.LinkType()
		rd.link = func(gopacket.CaptureInfo) layers.LinkType { return lt }
	default:
		return nil, fail.Inputf(file, "not a pcap or pcapng file (magic %08x)", magic)
	}
	return rd, nil
}

func isPcap(magic uint32) bool {
	for _, m := range []uint32{pcapMicro, pcapNano} {
		if magic == m || magic == swap32(m) {
			return true
		}
	}
	return false
}

func swap32(v uint32) uint32 {
	return v>>24 | v>>8&0xff00 | v<<8&0xff0000 | v<<24
}

// Next returns the next frame, or io.EOF after the last. A frame of
// another link type than Ethernet, or a damaged record, is an input
// error.
func (rd *Reader) Next() (f Frame, err error) {
	defer recoverInput(rd.file, &err)
	data, ci, err := rd.next()
	switch {
	case errors.Is(err, io.EOF):
		return Frame{}, io.EOF
	case err != nil:
		return Frame{}, fail.Inputf(rd.file, "frame %d: %v", rd.count, err)
	}
	if lt := rd.link(ci); lt != layers.LinkTypeEthernet {
		return Frame{}, fail.Inputf(rd.file, "frame %d: link type %v, want Ethernet", rd.count, lt)
	}
	rd.count++
	return Frame{Time: ci.Timestamp, WireLen: ci.Length, Data: data}, nil
}

// recoverInput turns a panic inside the capture decoder into an input
// error: the decoders are third-party code fed untrusted files.
func recoverInput(file string, err *error) {
	if r := recover(); r != nil {
		*err = fail.Inputf(file, "damaged capture: %v", r)
	}
}

// Frames is the number of frames read so far.
func (rd *Reader) Frames() int { return rd.count }
