// Package cli holds the conventions every dpperf subcommand follows
// (docs/cli.md), so that the commands differ only in what they compute:
//
//   - a flag set per subcommand whose -h lists its flags under a synopsis,
//     and hides short and deprecated spellings;
//   - flags accepted before, between and after the positional arguments;
//     a bad flag is one line with a hint, a usage error (exit 2);
//   - every numeric flag checked against its range before any work;
//   - the report on stdout as text, or JSON with --json, or in the file of
//     -o/--output, written through a temporary file so that a failed run
//     leaves none;
//   - progress on one terminal line, and nothing when stderr is not a
//     terminal.
package cli
