package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/dpperf/dpperf/internal/cli"
)

// version is set by the linker (-X main.version=...) for release builds.
var version = ""

// versionLine says which dpperf this is: the release or module version,
// the VCS revision and time it was built from (and whether the tree had
// changes), and the Go toolchain.
func versionLine() string {
	v, detail := version, []string{}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if v == "" {
			v = bi.Main.Version // "(devel)" for a build from a checkout
		}
		settings := map[string]string{}
		for _, s := range bi.Settings {
			settings[s.Key] = s.Value
		}
		if r := settings["vcs.revision"]; r != "" {
			detail = append(detail, "revision "+r[:min(12, len(r))])
		}
		if t := settings["vcs.time"]; t != "" {
			detail = append(detail, t)
		}
		if settings["vcs.modified"] == "true" {
			detail = append(detail, "modified")
		}
	}
	if v == "" {
		v = "(devel)"
	}
	detail = append(detail, runtime.Version())
	return fmt.Sprintf("dpperf %s (%s)", v, strings.Join(detail, ", "))
}

func runVersion(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("version", "version [--json] [-o FILE]", stderr)
	out := cli.AddOutput(fs, "docs/cli.md#small-json-forms")
	pos, err := cli.Parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return cli.UsageError(fs, "unexpected argument %q", pos[0])
	}
	return out.Write(stdout, func(w io.Writer) error {
		if !out.JSON {
			_, err := fmt.Fprintln(w, versionLine())
			return err
		}
		return json.NewEncoder(w).Encode(map[string]string{"schema": "dpperf.version/v1", "version": versionLine()})
	})
}
