package cli

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/dpperf/dpperf/internal/atomicfile"
)

// Output is a command's --json and -o/--output flags: the report goes to
// stdout as text, or as JSON with --json; -o/--output FILE writes it to
// FILE instead (through a temporary file, so that a failed run leaves no
// partial file). Artifacts such as pcaps, map contents, target files and
// HTML reports have flags of their own.
type Output struct {
	JSON   bool
	File   string
	Schema string // the markdown file documenting the JSON, from the repository's root
}

// AddOutput registers --json and -o/--output on fs; schema names the
// document of the JSON form, which -h shows.
func AddOutput(fs *flag.FlagSet, schema string) *Output {
	o := &Output{Schema: schema}
	fs.BoolVar(&o.JSON, "json", false, "print the result as JSON (schema: "+schema+")")
	fs.StringVar(&o.File, "output", "", "write the result (text, or JSON with --json) to `FILE` instead of stdout (also -o)")
	fs.StringVar(&o.File, "o", "", Hidden)
	return o
}

// WriteJSON writes v as the commands' JSON documents are written: indented
// by two spaces, one document per call.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// Write calls emit with stdout, or with the file of -o, which it writes
// atomically.
func (o *Output) Write(stdout io.Writer, emit func(io.Writer) error) error {
	w, finish, err := o.Open(stdout)
	if err != nil {
		return err
	}
	err = emit(w)
	return finish(err == nil, err)
}

// Open returns where the result goes: stdout, or a temporary file beside
// the file of -o that finish renames to it when ok and removes otherwise.
// finish returns err, or its own error when err is nil.
func (o *Output) Open(stdout io.Writer) (io.Writer, func(ok bool, err error) error, error) {
	if o.File == "" || o.File == "-" {
		return stdout, func(_ bool, err error) error { return err }, nil
	}
	f, err := atomicfile.Create(o.File)
	if err != nil {
		return nil, nil, err
	}
	return f, func(ok bool, err error) error {
		if !ok || err != nil {
			f.Abort()
			return err
		}
		return f.Commit()
	}, nil
}

// IsTerminal reports whether w is a character device (a terminal).
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// StatusLine returns a function that shows a message on one line of
// stderr, each replacing the last, and one that clears the line. Progress
// is for a person watching: when stderr is not a terminal (a pipe, a CI
// log, a file) both do nothing.
func StatusLine(stderr io.Writer) (show func(msg string), done func()) {
	if !IsTerminal(stderr) {
		return nil, func() {}
	}
	return func(msg string) { fmt.Fprintf(stderr, "\r\033[K%s", msg) },
		func() { fmt.Fprint(stderr, "\r\033[K") }
}
