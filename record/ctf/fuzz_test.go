package ctf

import (
	"bytes"
	"io"
	"testing"
)

// FuzzReader feeds arbitrary stream bytes to the reader under the standard
// metadata: it must return packets or an error, never panic or loop.
func FuzzReader(f *testing.F) {
	md := &Metadata{UUID: NewUUID(), Label: "l", Classes: StandardClasses()}
	var buf bytes.Buffer
	s := NewStream(&buf, "l", "t")
	_ = s.WritePacket(10, 100, 0, sampleEvents(20))
	_ = s.WritePacket(100, 200, 2, nil)
	f.Add(buf.Bytes())
	f.Add(buf.Bytes()[:70])
	f.Fuzz(func(t *testing.T, data []byte) {
		rd := NewReader(bytes.NewReader(data), md)
		for i := 0; i < 1000; i++ {
			p, err := rd.Next()
			if err != nil {
				if err == io.EOF && i == 0 && len(data) != 0 {
					t.Fatal("io.EOF on non-empty input")
				}
				return
			}
			for _, ev := range p.Events {
				if len(ev.Values) != len(ev.Class.Fields) {
					t.Fatal("event with wrong number of values")
				}
			}
		}
	})
}

// FuzzParseMetadata feeds arbitrary text to the metadata parser.
func FuzzParseMetadata(f *testing.F) {
	md := &Metadata{UUID: NewUUID(), Label: `a "quoted" label`, ClockOffsetNs: -5, Classes: StandardClasses()}
	f.Add(md.Text())
	f.Add(MetadataHeader + "\nevent {\n\tname = \"x\";\n\tid = 300;\n};")
	f.Fuzz(func(t *testing.T, text string) {
		md, err := ParseMetadata(text)
		if err != nil {
			return
		}
		back, err := ParseMetadata(md.Text())
		if err != nil {
			t.Fatalf("metadata written from a parsed one does not parse: %v", err)
		}
		if len(back.Classes) != len(md.Classes) {
			t.Fatalf("classes %d after round trip, want %d", len(back.Classes), len(md.Classes))
		}
	})
}
