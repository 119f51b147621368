package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/dpperf/dpperf/internal/cli"
	"github.com/dpperf/dpperf/internal/fail"
	"github.com/dpperf/dpperf/profile/path"
)

func runProfilePaths(args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("profile paths", "profile paths [--json] [NAME]", stderr)
	out := cli.AddOutput(fs, "profile/path/format.md")
	names, err := cli.Parse(fs, args)
	if err != nil {
		return err
	}
	if len(names) == 0 {
		list, err := path.Summaries()
		if err != nil {
			return err
		}
		return out.Write(stdout, func(w io.Writer) error {
			if out.JSON {
				return cli.WriteJSON(w, path.List{Schema: "dpperf.profile.paths/v1", Paths: list})
			}
			for _, e := range list {
				fmt.Fprintf(w, "%-10s %s\n           stages: %s\n", e.Name, e.Description, strings.Join(e.Stages, " "))
			}
			return nil
		})
	}
	data, err := path.Source(names[0])
	if err != nil {
		return fail.Usagef("%v", err)
	}
	return out.Write(stdout, func(w io.Writer) error {
		if out.JSON {
			return yamlAsJSON(w, data)
		}
		_, err := w.Write(data)
		return err
	})
}
