package kernel

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/dpperf/dpperf/record/ctf"
)

// recording is what readRecording found in a kernel trace directory.
type recording struct {
	events    uint64
	discarded uint64            // final events_discarded, summed over the streams
	perStream map[string]uint64 // final events_discarded per stream
	decoded   []ctf.Event
}

// readRecording decodes every stream of the kernel trace in dir and checks
// the order the recorder promises: in each stream, packets follow each
// other (each begins where the previous ended or later) and hold events
// within their range, in time order.
func readRecording(t *testing.T, dir string) recording {
	t.Helper()
	text, err := os.ReadFile(filepath.Join(dir, "metadata"))
	if err != nil {
		t.Fatal(err)
	}
	md, err := ctf.ParseMetadata(string(text))
	if err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	rc := recording{perStream: map[string]uint64{}}
	for _, e := range ents {
		if e.Name() == "metadata" {
			continue
		}
		f, err := os.Open(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		rd := ctf.NewReader(f, md)
		var end, last uint64
		for n := 0; ; n++ {
			p, err := rd.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", e.Name(), err)
			}
			if p.Begin < end {
				t.Errorf("%s: packet %d begins at %d, before the previous one's end %d", e.Name(), n, p.Begin, end)
			}
			for _, ev := range p.Events {
				if ev.Timestamp < p.Begin || ev.Timestamp > p.End || ev.Timestamp < last {
					t.Errorf("%s: packet %d [%d, %d] holds an event at %d after one at %d", e.Name(), n, p.Begin, p.End, ev.Timestamp, last)
				}
				last = ev.Timestamp
			}
			end = p.End
			rc.events += uint64(len(p.Events))
			rc.decoded = append(rc.decoded, p.Events...)
			rc.perStream[e.Name()] = p.Discarded
		}
		f.Close()
	}
	for _, d := range rc.perStream {
		rc.discarded += d
	}
	return rc
}
