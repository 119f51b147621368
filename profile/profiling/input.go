package profiling

import (
	"os"

	"github.com/dpperf/dpperf/internal/fail"
	"github.com/dpperf/dpperf/profile/analyze"
	"github.com/dpperf/dpperf/profile/ctftrace"
	"github.com/dpperf/dpperf/profile/path"
	"github.com/dpperf/dpperf/profile/tracetext"
)

// traceInput is what profile analyze reads: trace text files, or the CTF
// kernel trace of one dpperf record recording.
type traceInput interface {
	analyze.Source
	Seen() []bool    // per path event: present in the input
	Lost() int64     // events the tracer reported lost
	Current() string // the file or directory being read, for errors
	Close() error
}

type textInput struct{ *tracetext.Files }

func (t textInput) Lost() int64 { return t.Stats().Lost }

type ctfInput struct {
	*ctftrace.Trace
	dir string
}

func (c ctfInput) Lost() int64     { return c.Stats().Lost }
func (c ctfInput) Current() string { return c.dir }

// openTraceInput opens names for path p: one directory (a recording of
// dpperf record, or its kernel trace) or any number of text files.
func openTraceInput(names []string, p *path.Path) (traceInput, error) {
	var dirs int
	for _, n := range names {
		if st, err := os.Stat(n); err == nil && st.IsDir() {
			dirs++
		}
	}
	switch {
	case dirs == 0:
		return textInput{tracetext.OpenFiles(names, p)}, nil
	case dirs > 1 || len(names) > 1:
		return nil, fail.Usagef("profile analyze: give one recording directory, or trace text files")
	}
	t, err := ctftrace.Open(names[0], p)
	if err != nil {
		return nil, fail.Input(names[0], err)
	}
	return ctfInput{t, names[0]}, nil
}
