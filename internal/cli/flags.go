package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/dpperf/dpperf/internal/fail"
)

// NewFlagSet makes a flag set for a subcommand whose usage text lists its
// flags under a one-line synopsis.
func NewFlagSet(name, synopsis string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: dpperf %s\n\nFlags:\n", synopsis)
		PrintFlags(fs, stderr)
	}
	return fs
}

// Parse parses args allowing flags before, between and after the
// positional arguments, which it returns, and checks the numeric flags
// against Ranges. Bad flags are usage errors; -h returns flag.ErrHelp
// (exit 0).
func Parse(fs *flag.FlagSet, args []string) ([]string, error) {
	if ParsedHook != nil {
		ParsedHook(fs)
	}
	var pos []string
	for {
		// The flag package prints the whole flag list on an error; a
		// user who mistyped one flag gets one line and a hint instead,
		// and the list only with -h.
		usage, out := fs.Usage, fs.Output()
		fs.Usage = func() {}
		fs.SetOutput(io.Discard)
		err := fs.Parse(args)
		fs.Usage = usage
		fs.SetOutput(out)
		if errors.Is(err, flag.ErrHelp) {
			usage()
			return nil, err
		}
		if err != nil {
			return nil, UsageError(fs, "%v", err)
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, checkRanges(fs)
		}
		if args[0] == "--" {
			return append(pos, args[1:]...), checkRanges(fs)
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// ParsedHook, when set (tests), sees every flag set Parse parses.
var ParsedHook func(*flag.FlagSet)

// UsageError is a usage error of the command of fs, with a hint where its
// flags are listed.
func UsageError(fs *flag.FlagSet, format string, args ...any) error {
	return fail.Usagef("%s: %s (see 'dpperf %s -h')", fs.Name(), fmt.Sprintf(format, args...), fs.Name())
}

// List collects a repeatable string flag.
type List []string

func (l *List) String() string     { return strings.Join(*l, ",") }
func (l *List) Set(v string) error { *l = append(*l, v); return nil }

// Hidden, as a flag's usage (or its start), keeps the flag out of -h: the
// short spelling of a listed one, or a deprecated spelling.
const Hidden = "\x00hidden"

// Deprecated registers name as a hidden spelling that still works: its
// value goes to set, and a one-line warning naming the new spelling to
// stderr.
func Deprecated(fs *flag.FlagSet, name, instead string, stderr io.Writer, isBool bool, set func(string) error) {
	fs.Var(&deprecated{name: name, instead: instead, stderr: stderr, isBool: isBool, set: set}, name, Hidden)
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

// PrintFlags lists fs's flags as flag.PrintDefaults does, leaving out the
// hidden ones.
func PrintFlags(fs *flag.FlagSet, w io.Writer) {
	shown := flag.NewFlagSet(fs.Name(), flag.ContinueOnError)
	shown.SetOutput(w)
	fs.VisitAll(func(f *flag.Flag) {
		if strings.HasPrefix(f.Usage, Hidden) {
			return
		}
		shown.Var(f.Value, f.Name, f.Usage)
		shown.Lookup(f.Name).DefValue = f.DefValue
	})
	shown.PrintDefaults()
}

// IsSet says whether the command line gave the flag name.
func IsSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(fl *flag.Flag) { set = set || fl.Name == name })
	return set
}
