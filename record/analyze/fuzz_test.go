package analyze

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// FuzzAnalyze runs the analyses and both Perfetto exports on a recording
// whose one stream file holds arbitrary bytes: they must report or return
// an error, never panic, and the protobuf export must decode. The seeds
// are the stream of the golden fixture, cut and corrupted
// (testdata/fuzz/FuzzAnalyze).
func FuzzAnalyze(f *testing.F) {
	seed, err := os.ReadFile(filepath.Join(fixture(f), "app", "router", "ep"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	// One recording directory serves every input (inputs run one at a
	// time in a process): creating one per input would make the
	// filesystem, not the analyses, the bottleneck.
	dir := fixture(f)
	stream := filepath.Join(dir, "app", "router", "ep")
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(stream, data, 0o644); err != nil {
			t.Fatal(err)
		}
		r, err := Analyze(dir)
		if err != nil {
			return
		}
		if err := WriteText(io.Discard, r, true); err != nil {
			t.Fatal(err)
		}
		if _, err := ExportPerfetto(dir, io.Discard); err != nil {
			t.Fatal(err)
		}
		var pb bytes.Buffer
		if _, err := ExportPerfettoProto(dir, &pb); err != nil {
			t.Fatal(err)
		}
		if _, _, err := decodePerfetto(pb.Bytes()); err != nil {
			t.Fatalf("protobuf export does not decode: %v", err)
		}
	})
}
