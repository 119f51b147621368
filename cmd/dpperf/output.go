package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/dpperf/dpperf/internal/atomicfile"
)

// The output convention of every command (docs/cli.md): the report goes to
// stdout as text, or as JSON with --json; -o/--output FILE writes it to
// FILE instead (through a temporary file, so that a failed run leaves no
// partial file). Artifacts such as pcaps, map contents, target files and
// HTML reports have flags of their own.

// outputFlags are a command's --json and -o/--output flags.
type outputFlags struct {
	json   bool
	file   string
	schema string // the markdown file documenting the JSON, from the repository's root
}

// addOutputFlags registers --json and -o/--output on fs; schema names the
// document of the JSON form, which -h shows.
func addOutputFlags(fs *flag.FlagSet, schema string) *outputFlags {
	o := &outputFlags{schema: schema}
	fs.BoolVar(&o.json, "json", false, "print the result as JSON (schema: "+schema+")")
	fs.StringVar(&o.file, "output", "", "write the result (text, or JSON with --json) to `FILE` instead of stdout (also -o)")
	fs.StringVar(&o.file, "o", "", hiddenUsage)
	return o
}

// writeJSON writes v as the commands' JSON documents are written: indented
// by two spaces, one document per call.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// write calls emit with stdout, or with the file of -o, which it writes
// atomically.
func (o *outputFlags) write(stdout io.Writer, emit func(io.Writer) error) error {
	w, finish, err := o.open(stdout)
	if err != nil {
		return err
	}
	err = emit(w)
	return finish(err == nil, err)
}

// open returns where the result goes: stdout, or a temporary file beside
// the file of -o that finish renames to it when ok and removes otherwise.
// finish returns err, or its own error when err is nil.
func (o *outputFlags) open(stdout io.Writer) (io.Writer, func(ok bool, err error) error, error) {
	if o.file == "" || o.file == "-" {
		return stdout, func(_ bool, err error) error { return err }, nil
	}
	f, err := atomicfile.Create(o.file)
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

// hiddenUsage marks a flag -h does not list: the short spelling of a listed
// one, or a deprecated spelling.
const hiddenUsage = "\x00hidden"

// deprecatedFlag registers name as a hidden spelling that still works: its
// value goes to set, and a one-line warning naming the new spelling to
// stderr.
func deprecatedFlag(fs *flag.FlagSet, name, instead string, stderr io.Writer, isBool bool, set func(string) error) {
	fs.Var(&deprecated{name: name, instead: instead, stderr: stderr, isBool: isBool, set: set}, name, hiddenUsage)
}

type deprecated struct {
	name, instead string
	stderr        io.Writer
	isBool        bool
	set           func(string) error
}

func (d *deprecated) String() string   { return "" }
func (d *deprecated) IsBoolFlag() bool { return d.isBool }
func (d *deprecated) Set(v string) error {
	fmt.Fprintf(d.stderr, "dpperf: --%s is deprecated; use %s\n", d.name, d.instead)
	return d.set(v)
}

// printFlags lists fs's flags as flag.PrintDefaults does, leaving out the
// hidden ones.
func printFlags(fs *flag.FlagSet, w io.Writer) {
	shown := flag.NewFlagSet(fs.Name(), flag.ContinueOnError)
	shown.SetOutput(w)
	fs.VisitAll(func(f *flag.Flag) {
		if strings.HasPrefix(f.Usage, hiddenUsage) {
			return
		}
		shown.Var(f.Value, f.Name, f.Usage)
		shown.Lookup(f.Name).DefValue = f.DefValue
	})
	shown.PrintDefaults()
}
