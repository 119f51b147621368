package replay

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/dpperf/dpperf/internal/fail"
)

// FuzzReader feeds arbitrary bytes to the capture reader and replays what
// it reads through flowtable: errors are input errors, never panics. The
// seeds are the captures in testdata (pcap, pcapng, gzip).
func FuzzReader(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("testdata", "*.pcap*"))
	if len(seeds) == 0 {
		f.Fatal("no seed captures in testdata")
	}
	for _, s := range seeds {
		data, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	r, err := New(flowtable(f), Options{})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		rd, err := NewReader(bytes.NewReader(data), "fuzz.pcap")
		for n := 0; err == nil && n < 1000; n++ {
			var fr Frame
			if fr, err = rd.Next(); err == nil {
				r.Step(fr)
			}
		}
		if err != nil && !errors.Is(err, io.EOF) && fail.ExitCode(err) != fail.ExitInput {
			t.Fatalf("not an input error: %v", err)
		}
	})
}
