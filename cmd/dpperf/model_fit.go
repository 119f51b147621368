package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/dpperf/dpperf/internal/cli"
	"github.com/dpperf/dpperf/internal/fail"
	"github.com/dpperf/dpperf/model/fit"
	"github.com/dpperf/dpperf/model/spec"
	"github.com/dpperf/dpperf/units"
)

func runModelFit(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("model fit", "model fit --curve FILE [--vertex GRAPH.VERTEX | --ip IP] [flags] spec.yaml\n       dpperf model fit --profile A.json[,B.json] [--check C.json] [--write OUT.yaml]", stderr)
	curveFile := fs.String("curve", "", "measured latency-vs-load curve: a CSV file (load or iops, latency[, size]) or fio's JSON output (.json)")
	vertex := fs.String("vertex", "", "the stage: GRAPH.VERTEX (its IP gets throughput, parallelism and queue, the vertex the overhead)")
	ipName := fs.String("ip", "", "the stage's IP, when --vertex is not given (its only vertex gets the overhead)")
	size := fs.String("size", "", "request size of CSV rows without a size column (e.g. 4KiB)")
	params := fs.String("fit", strings.Join(fit.All, ","), "parameters to fit; the others keep the specification's values")
	write := fs.String("write", "", "write the specification with the fitted values to this YAML file")
	distance := fs.String("distance", fit.Orthogonal, "distance of a point to the curve: orthogonal (log load and log latency) or vertical (relative latency error)")
	format := addModelOutput(fs, stderr)
	profiles := fs.String("profile", "", "fit a model of an I/O path to `dpperf profile --json` reports (comma-separated, one per load) instead of a stage to a curve")
	group := fs.String("group", "", "with --profile: the request group (e.g. 'read 4KiB'; default each profile's first)")
	check := fs.String("check", "", "with --profile: predict the latencies at the load of this profile and compare")
	parallelism := fs.String("parallelism", "auto", "with --profile: engines of split stages, or auto: fitted to two or more profiles, estimated from one (Little's law)")
	pos, err := cli.Parse(fs, args)
	if err != nil {
		return err
	}
	if *profiles != "" {
		if len(pos) != 0 || *curveFile != "" {
			return fail.Usagef("model fit: --profile writes a specification of its own: no --curve and no spec.yaml")
		}
		d := 0
		if *parallelism != "auto" {
			if d, err = strconv.Atoi(*parallelism); err != nil || d < 1 || d > 256 {
				return fail.Usagef("model fit: --parallelism: want auto or a whole number of engines from 1 to 256, got %q", *parallelism)
			}
		}
		return runFitPath(*profiles, *group, *check, *write, format, d, stdout)
	}
	path, err := oneArg("fit", pos)
	if err != nil {
		return err
	}
	if *curveFile == "" {
		return fail.Usagef("model fit: --curve is required")
	}
	doc, err := readParamDoc(path)
	if err != nil {
		return err
	}
	sd, ok := doc.(*spec.Doc)
	if !ok {
		return fail.Usagef("model fit: %s is in the LogNIC format; fit writes into dpperf specifications", path)
	}
	s, err := sd.Spec()
	if err != nil {
		return fail.Input("", err)
	}
	if (*vertex == "") == (*ipName == "") {
		return fail.Usagef("model fit: give the stage with --vertex GRAPH.VERTEX or --ip IP")
	}
	t, err := fit.FindTarget(s, *vertex, *ipName)
	if err != nil {
		return fail.Usagef("model fit: %v", err)
	}
	var defSize float64
	if *size != "" {
		if defSize, err = units.Parse(*size, units.Size); err != nil {
			return fail.Usagef("--size: %v", err)
		}
	}
	pts, err := fit.LoadCurve(*curveFile, defSize)
	if err != nil {
		return fail.Input("", err)
	}
	if *distance != fit.Orthogonal && *distance != fit.Vertical {
		return fail.Usagef("--distance: want orthogonal or vertical, got %q", *distance)
	}
	o := fit.Options{Distance: *distance, Free: strings.Split(*params, ",")}
	if err := t.CheckFree(o.Free); err != nil {
		return fail.Usagef("model fit: %v", err)
	}
	r, err := fit.FitTarget(s, t, pts, o)
	if err != nil {
		return fail.Input(*curveFile, err)
	}
	if err := writeResult(stdout, format, r.WriteText, r); err != nil {
		return err
	}
	if *write == "" {
		return nil
	}
	if err := r.WriteInto(sd); err != nil {
		return fmt.Errorf("--write: %w", err)
	}
	b, err := sd.Bytes()
	if err != nil {
		return err
	}
	return writeFileAtomic(*write, b)
}

// readProfiles reads comma-separated profile files.
func readProfiles(list string) ([]*fit.Profile, error) {
	var ps []*fit.Profile
	for _, name := range strings.Split(list, ",") {
		p, err := fit.LoadProfile(name)
		if err != nil {
			return nil, fail.Input("", err)
		}
		ps = append(ps, p)
	}
	return ps, nil
}

// runFitPath fits a model of an I/O path to profiles, writes it, and
// checks it against a profile at another load.
func runFitPath(profiles, group, check, write string, format *cli.Output, parallelism int, stdout io.Writer) error {
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
