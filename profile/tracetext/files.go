package tracetext

import (
	"errors"
	"io"
	"os"

	"github.com/dpperf/dpperf/profile/event"
	"github.com/dpperf/dpperf/profile/path"
)

// Files reads several trace files one after the other as one stream.
type Files struct {
	files []string
	path  *path.Path
	name  string
	f     *os.File
	r     *Reader
	seen  []bool
	stats Stats
}

// OpenFiles prepares to read names in order for path p.
func OpenFiles(names []string, p *path.Path) *Files {
	return &Files{files: names, path: p, seen: make([]bool, len(p.Events))}
}

// Current names the file being read (for error messages).
func (m *Files) Current() string { return m.name }

// Next returns the next event of all files, or io.EOF.
func (m *Files) Next() (event.Event, error) {
	for {
		if m.r == nil {
			if len(m.files) == 0 {
				return event.Event{}, io.EOF
			}
			m.name, m.files = m.files[0], m.files[1:]
			f, err := os.Open(m.name)
			if err != nil {
				return event.Event{}, err
			}
			m.f = f
			if m.r, err = NewReader(f, m.path); err != nil {
				return event.Event{}, err
			}
		}
		ev, err := m.r.Next()
		if errors.Is(err, io.EOF) {
			m.finish()
			continue
		}
		return ev, err
	}
}

func (m *Files) finish() {
	for i, s := range m.r.Seen() {
		m.seen[i] = m.seen[i] || s
	}
	st := m.r.Stats()
	m.stats.Lines += st.Lines
	m.stats.Events += st.Events
	m.stats.Skipped += st.Skipped
	m.stats.Lost += st.Lost
	m.f.Close()
	m.r, m.f = nil, nil
}

// Seen reports, per path event, whether any finished file contained it.
func (m *Files) Seen() []bool { return m.seen }

// Stats sums the counts of the finished files.
func (m *Files) Stats() Stats { return m.stats }

// Close closes the file being read, if any.
func (m *Files) Close() error {
	if m.f != nil {
		return m.f.Close()
	}
	return nil
}
