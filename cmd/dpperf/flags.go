package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/dpperf/dpperf/internal/fail"
)

// newFlagSet makes a flag set for a subcommand whose usage text lists its
// flags under a one-line synopsis.
func newFlagSet(name, synopsis string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: dpperf %s\n\nFlags:\n", synopsis)
		printFlags(fs, stderr)
	}
	return fs
}

// parseFlags parses args allowing flags before, between and after the
// positional arguments, which it returns. Bad flags are usage errors; -h
// returns flag.ErrHelp (exit 0).
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	if parsedHook != nil {
		parsedHook(fs)
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
			return nil, usageError(fs, "%v", err)
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

// parsedHook, when set (tests), sees every flag set parseFlags parses.
var parsedHook func(*flag.FlagSet)

// usageError is a usage error of the command of fs, with a hint where its
// flags are listed.
func usageError(fs *flag.FlagSet, format string, args ...any) error {
	return fail.Usagef("%s: %s (see 'dpperf %s -h')", fs.Name(), fmt.Sprintf(format, args...), fs.Name())
}

// listFlag collects a repeatable string flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }
