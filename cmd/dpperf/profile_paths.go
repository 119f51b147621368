package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/dpperf/dpperf/internal/fail"
	"github.com/dpperf/dpperf/profile/path"
)

func runProfilePaths(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("profile paths", "profile paths [--json] [NAME]", stderr)
	out := addOutputFlags(fs, "profile/path/format.md")
	names, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(names) == 0 {
		list, err := path.Summaries()
		if err != nil {
			return err
		}
		return out.write(stdout, func(w io.Writer) error {
			if out.json {
				return writeJSON(w, struct {
					Schema string         `json:"schema"`
					Paths  []path.Summary `json:"paths"`
				}{"dpperf.profile.paths/v1", list})
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
	return out.write(stdout, func(w io.Writer) error {
		if out.json {
			return yamlAsJSON(w, data)
		}
		_, err := w.Write(data)
		return err
	})
}
