package analyze

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/dpperf/dpperf/record/ctf"
)

// StreamRef names one stream file of a recording.
type StreamRef struct {
	Path   string // relative to the recording directory
	Label  string // component label from the metadata
	Thread string // file name, until the first packet names the thread
	md     *ctf.Metadata
}

// Streams finds the CTF traces under dir (directories holding a metadata
// file) and returns their stream files in path order.
func Streams(dir string) ([]StreamRef, error) {
	var refs []StreamRef
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		text, err := os.ReadFile(filepath.Join(path, "metadata"))
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		md, err := ctf.ParseMetadata(string(text))
		if err != nil {
			return fmt.Errorf("%s: %w", filepath.Join(path, "metadata"), err)
		}
		ents, err := os.ReadDir(path)
		if err != nil {
			return err
		}
		for _, e := range ents {
			if e.IsDir() || e.Name() == "metadata" || strings.HasPrefix(e.Name(), ".") {
				continue
			}
			rel, _ := filepath.Rel(dir, filepath.Join(path, e.Name()))
			refs = append(refs, StreamRef{Path: rel, Label: md.Label, Thread: e.Name(), md: md})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(refs) == 0 {
		return nil, fmt.Errorf("no CTF trace (directory with a metadata file) under %s", dir)
	}
	sort.Slice(refs, func(i, j int) bool { return refs[i].Path < refs[j].Path })
	return refs, nil
}

// Visitor receives the events of one stream in order.
type Visitor interface {
	// Event is called for every event of stream s.
	Event(s *StreamRef, ev *ctf.Event)
}

// Walk reads every stream under dir and passes its events to the visitors,
// one packet at a time. A stream that ends inside a packet (a recording cut
// by a crash, not repaired) is read up to its last whole packet and listed
// in the returned warnings; any other damage is an error naming the file.
// It returns the streams with their statistics.
func Walk(dir string, visitors ...Visitor) ([]StreamStats, []string, error) {
	refs, err := Streams(dir)
	if err != nil {
		return nil, nil, err
	}
	var stats []StreamStats
	var warnings []string
	for i := range refs {
		ref := &refs[i]
		st, err := walkStream(dir, ref, visitors)
		if errors.Is(err, io.ErrUnexpectedEOF) {
			warnings = append(warnings, fmt.Sprintf("%s: %v (run 'dpperf record repair')", ref.Path, err))
		} else if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", filepath.Join(dir, ref.Path), err)
		}
		stats = append(stats, st)
	}
	return stats, warnings, nil
}

func walkStream(dir string, ref *StreamRef, visitors []Visitor) (StreamStats, error) {
	st := StreamStats{Path: ref.Path, Label: ref.Label, Thread: ref.Thread, Events: map[string]uint64{}}
	f, err := os.Open(filepath.Join(dir, ref.Path))
	if err != nil {
		return st, err
	}
	defer f.Close()
	rd := ctf.NewReader(f, ref.md)
	for {
		p, err := rd.Next()
		if err == io.EOF {
			return st, nil
		}
		if err != nil {
			return st, err
		}
		if st.Packets == 0 {
			ref.Thread, st.Thread = p.Thread, p.Thread
			st.Begin = p.Begin
		}
		st.End = p.End
		st.Packets++
		st.Discarded = p.Discarded
		for i := range p.Events {
			ev := &p.Events[i]
			st.Events[ev.Class.Name]++
			for _, v := range visitors {
				v.Event(ref, ev)
			}
		}
	}
}

// StreamStats summarise one stream.
type StreamStats struct {
	Path      string            `json:"path"`
	Label     string            `json:"label"`
	Thread    string            `json:"thread"`
	Packets   uint64            `json:"packets"`
	Discarded uint64            `json:"events_discarded"`
	Begin     uint64            `json:"begin_ns"`
	End       uint64            `json:"end_ns"`
	Events    map[string]uint64 `json:"events"`
}
