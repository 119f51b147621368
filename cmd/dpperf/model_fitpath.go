package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/dpperf/dpperf/internal/fail"
	"github.com/dpperf/dpperf/model/fit"
)

// readProfiles reads comma-separated profile files.
func readProfiles(list string) ([]*fit.Profile, error) {
	var ps []*fit.Profile
	for _, name := range strings.Split(list, ",") {
		f, err := os.Open(name)
		if err != nil {
			return nil, fail.Input(name, fmt.Errorf("open profile: %w", unwrapPath(err)))
		}
		p, err := fit.ReadProfile(f, name)
		f.Close()
		if err != nil {
			return nil, fail.Input("", err)
		}
		ps = append(ps, p)
	}
	return ps, nil
}

func unwrapPath(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// runFitPath fits a model of an I/O path to profiles, writes it, and
// checks it against a profile at another load.
func runFitPath(profiles, group, check, write string, format *outputFlags, parallelism int, stdout io.Writer) error {
	ps, err := readProfiles(profiles)
	if err != nil {
		return err
	}
	pf, err := fit.FitPath(ps, fit.PathOptions{Group: group, Parallelism: parallelism})
	if err != nil {
		return fail.Input("", err)
	}
	var check1 *fit.Profile
	if check != "" {
		cs, err := readProfiles(check)
		if err != nil {
			return err
		}
		check1 = cs[0]
	}
	r, err := pf.Report(check1)
	if err != nil {
		return fail.Input(check, err)
	}
	if err := writeResult(stdout, format, r.WriteText, r); err != nil {
		return err
	}
	if write == "" {
		return nil
	}
	if _, err := pf.Spec(); err != nil {
		return err
	}
	return writeFileAtomic(write, pf.YAML())
}
