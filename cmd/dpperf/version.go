package main

import (
	"context"
	"fmt"
	"io"
	"runtime/debug"
)

// version is set by the linker (-X main.version=...) for release builds.
var version = ""

func runVersion(_ context.Context, _ []string, stdout, _ io.Writer) error {
	v := version
	if v == "" {
		v = "devel"
		if bi, ok := debug.ReadBuildInfo(); ok {
			for _, s := range bi.Settings {
				if s.Key == "vcs.revision" && len(s.Value) >= 12 {
					v = "devel-" + s.Value[:12]
				}
			}
		}
	}
	fmt.Fprintln(stdout, "dpperf", v)
	return nil
}
