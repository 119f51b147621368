package main

import (
	"io"

	"github.com/dpperf/dpperf/internal/atomicfile"
	"github.com/dpperf/dpperf/internal/cli"
	"github.com/dpperf/dpperf/internal/fail"
	"github.com/dpperf/dpperf/profile/profiling"
	"github.com/dpperf/dpperf/profile/report"
)

func runProfileCompare(args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("profile compare", "profile compare [flags] BASE.json LOADED.json", stderr)
	out := cli.AddOutput(fs, "profile/report/schema.md")
	htmlOut := fs.String("html", "", "also write an HTML report with the LAD chart to `FILE`")
	failAbove := fs.Float64("fail-above", 0, "exit 1 when any group's LAD over the whole span (Q→C on the block path) exceeds this")
	files, err := cli.Parse(fs, args)
	if err != nil {
		return err
	}
	if len(files) != 2 {
		return fail.Usagef("profile compare: want two JSON profiles, got %d arguments", len(files))
	}
	c, loaded, err := profiling.Compare(files[0], files[1])
	if err != nil {
		return err
	}
	if *htmlOut != "" {
		if err := atomicfile.Write(*htmlOut, func(w io.Writer) error { return report.HTML(w, loaded, c) }); err != nil {
			return err
		}
	}
	err = out.Write(stdout, func(w io.Writer) error {
		if out.JSON {
			return report.JSON(w, c)
		}
		return report.CompareText(w, c)
	})
	if err != nil {
		return err
	}
	if g := c.Above(*failAbove); *failAbove > 0 && g != nil {
		return fail.Requirementf("profile compare: group %s has LAD %.2f above %.2f (%s)", g.Key, g.LAD, *failAbove, g.Verdict)
	}
	return nil
}
