package main

import (
	"context"
	"fmt"
	"io"

	"github.com/dpperf/dpperf/calibrate"
	"github.com/dpperf/dpperf/internal/cli"
	"github.com/dpperf/dpperf/internal/fail"
	"github.com/dpperf/dpperf/target"
	"go.yaml.in/yaml/v3"
)

func runTargets(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "calibrate" {
		return runTargetsCalibrate(ctx, args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "fit" {
		return runTargetsFit(ctx, args[1:], stdout, stderr)
	}
	fs := cli.NewFlagSet("targets", "targets [NAME] | targets calibrate --write FILE [flags] | targets fit --target FILE --write FILE OBJECT...", stderr)
	out := cli.AddOutput(fs, "target/json.md")
	pos, err := cli.Parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 1 {
		return fail.Usagef("targets: want at most one target name")
	}
	if len(pos) == 1 {
		data, err := targetSource(ctx, pos[0], stderr)
		if err != nil {
			return err
		}
		return out.Write(stdout, func(w io.Writer) error {
			if out.JSON {
				return yamlAsJSON(w, data)
			}
			_, err := w.Write(data)
			return err
		})
	}
	return out.Write(stdout, func(w io.Writer) error { return listTargets(ctx, w, out.JSON) })
}

// targetSource is the YAML of a target: its file, or for host this
// machine's calibration.
func targetSource(ctx context.Context, name string, stderr io.Writer) ([]byte, error) {
	if name != hostTarget {
		return target.Raw(name)
	}
	t, err := loadTarget(ctx, hostTarget, stderr)
	if err != nil {
		return nil, err
	}
	return target.Marshal(t)
}

// yamlAsJSON writes a YAML document as indented JSON.
func yamlAsJSON(w io.Writer, data []byte) error {
	var v any
	if err := yaml.Unmarshal(data, &v); err != nil {
		return err
	}
	return cli.WriteJSON(w, v)
}

// listTargets lists the built-in targets and host as a table or as JSON.
func listTargets(ctx context.Context, w io.Writer, asJSON bool) error {
	list, err := target.BuiltIn()
	if err != nil {
		return err
	}
	host := target.Entry{Name: hostTarget, Description: "this machine, calibrated on first use (root, about a minute)", Basis: "calibrated"}
	if cache, err := calibrate.DefaultHostCache(); err == nil {
		if _, path, err := cache.Lookup(calibrate.ThisHost()); err == nil {
			host.Description, host.File = "this machine, calibrated: "+path, path
		}
	}
	list = append(list, host)
	if asJSON {
		return cli.WriteJSON(w, target.List{Schema: "dpperf.targets/v1", Targets: list})
	}
	width := 0
	for _, e := range list {
		width = max(width, len(e.Name))
	}
	for _, e := range list {
		fmt.Fprintf(w, "%-*s  %s\n", width, e.Name, e.Description)
	}
	_, err = fmt.Fprintln(w, "\nShow one with 'dpperf targets NAME'; use your own with --target FILE.yaml.")
	return err
}
