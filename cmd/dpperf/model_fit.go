package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/dpperf/dpperf/internal/fail"
	"github.com/dpperf/dpperf/model/fit"
	"github.com/dpperf/dpperf/model/spec"
	"github.com/dpperf/dpperf/units"
)

// FitResult is the JSON form of `dpperf model fit` (schema
// "dpperf.model.fit/v1").
type FitResult struct {
	Schema      string      `json:"schema"`
	IP          string      `json:"ip"`
	Vertex      string      `json:"vertex"`
	Fitted      []string    `json:"fitted"`
	Size        units.Num   `json:"size_B"`
	Throughput  units.Num   `json:"throughput_Bps"`
	Parallelism units.Num   `json:"parallelism"`
	Queue       units.Num   `json:"queue"`
	Overhead    units.Num   `json:"overhead_s"`
	Distance    string      `json:"distance"`
	RMS         units.Num   `json:"rms_distance"`
	MaxErr      units.Num   `json:"max_distance"`
	Evaluations int         `json:"evaluations"`
	Points      []FitPointR `json:"points"`
}

// FitPointR is one measured point beside the fitted model.
type FitPointR struct {
	Load      units.Num `json:"load_Bps"`
	Latency   units.Num `json:"latency_s"`
	Model     units.Num `json:"model_latency_s"` // at the measured load
	ModelLoad units.Num `json:"model_load_Bps"`  // at the measured latency
}

func runModelFit(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("model fit", "model fit --curve FILE [--vertex GRAPH.VERTEX | --ip IP] [flags] spec.yaml\n       dpperf model fit --profile A.json[,B.json] [--check C.json] [--write OUT.yaml]", stderr)
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
	pos, err := parseFlags(fs, args)
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
	st, err := fitStage(s, *vertex, *ipName)
	if err != nil {
		return fail.Usagef("model fit: %v", err)
	}
	var defSize float64
	if *size != "" {
		if defSize, err = units.Parse(*size, units.Size); err != nil {
			return fail.Usagef("--size: %v", err)
		}
	}
	pts, err := readCurve(*curveFile, defSize)
	if err != nil {
		return err
	}
	ip := s.Hardware.IPs[s.Hardware.IPByName(st.ip)]
	if *distance != fit.Orthogonal && *distance != fit.Vertical {
		return fail.Usagef("--distance: want orthogonal or vertical, got %q", *distance)
	}
	o := fit.Options{Distance: *distance, Free: strings.Split(*params, ","), Fixed: fit.Stage{Throughput: ip.Throughput.At(pts[0].Size),
		Parallelism: float64(ip.Parallelism), Queue: ip.Queue, Overhead: st.overhead}}
	if st.vertex == "" && slices.Contains(o.Free, fit.Overhead) {
		return fail.Usagef("model fit: IP %s runs several vertices: name the one that gets the overhead with --vertex", st.ip)
	}
	res, err := fit.Fit(pts, o)
	if err != nil {
		return fail.Input(*curveFile, err)
	}
	r := &FitResult{Schema: "dpperf.model.fit/v1", IP: st.ip, Vertex: st.vertex, Fitted: o.Free, Size: units.Num(res.Size),
		Throughput: units.Num(res.Throughput), Parallelism: units.Num(res.Parallelism), Queue: units.Num(res.Queue),
		Overhead: units.Num(res.Overhead), Distance: *distance, RMS: units.Num(res.RMS), MaxErr: units.Num(res.MaxErr), Evaluations: res.Evaluations}
	for i, pt := range pts {
		r.Points = append(r.Points, FitPointR{Load: units.Num(pt.Load), Latency: units.Num(pt.Latency), Model: units.Num(res.Predicted[i]),
			ModelLoad: units.Num(res.LoadAt[i])})
	}
	if err := writeResult(stdout, format, func(w io.Writer) error { return writeFitText(w, r) }, r); err != nil {
		return err
	}
	if *write == "" {
		return nil
	}
	if err := writeFitted(sd, st, o.Free, res); err != nil {
		return err
	}
	b, err := sd.Bytes()
	if err != nil {
		return err
	}
	return writeFileAtomic(*write, b)
}

// stageRef names the IP and vertex a fit writes into.
type stageRef struct {
	ip, vertex string // vertex as GRAPH.VERTEX, empty if the IP has several
	overhead   float64
}

// fitStage finds the stage: a vertex with its IP to itself.
func fitStage(s *spec.Spec, vertex, ip string) (stageRef, error) {
	if (vertex == "") == (ip == "") {
		return stageRef{}, fmt.Errorf("give the stage with --vertex GRAPH.VERTEX or --ip IP")
	}
	var on []string
	ref := stageRef{ip: ip}
	for _, g := range s.Graphs {
		for _, v := range g.Vertices {
			name := g.Name + "." + v.Name
			if name == vertex {
				ref.ip = v.IP
			}
		}
	}
	if ref.ip == "" {
		return ref, fmt.Errorf("no vertex %q", vertex)
	}
	if s.Hardware.IPByName(ref.ip) < 0 {
		return ref, fmt.Errorf("no IP %q", ref.ip)
	}
	for _, g := range s.Graphs {
		for _, v := range g.Vertices {
			if v.IP != ref.ip {
				continue
			}
			if spec.Share(&s.Hardware, v) != 0 {
				return ref, fmt.Errorf("vertex %s.%s reserves part of IP %s; fit needs the whole IP", g.Name, v.Name, ref.ip)
			}
			on = append(on, g.Name+"."+v.Name)
			if vertex == "" || g.Name+"."+v.Name == vertex {
				ref.overhead = v.Overhead
			}
		}
	}
	switch {
	case vertex != "":
		ref.vertex = vertex
	case len(on) == 1:
		ref.vertex = on[0]
	default:
		ref.overhead = 0
	}
	return ref, nil
}

// readCurve reads a CSV curve or, for .json files, fio's JSON output.
func readCurve(path string, size float64) ([]fit.Point, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fail.Input("", fmt.Errorf("open curve: %w", err))
	}
	defer f.Close()
	var pts []fit.Point
	if strings.EqualFold(filepath.Ext(path), ".json") {
		pts, err = fit.ReadFio(f, path)
	} else {
		pts, err = fit.ReadCSV(f, path, size)
	}
	if err != nil {
		return nil, fail.Input("", err)
	}
	return pts, nil
}

// writeFitted writes the fitted parameters into the specification: the
// throughput at the curve's request size, the IP's parallelism and queue,
// the vertex's overhead.
func writeFitted(d *spec.Doc, st stageRef, free []string, r *fit.Result) error {
	for _, p := range free {
		var err error
		switch p {
		case fit.Throughput:
			err = d.SetThroughputAt(st.ip, r.Size, r.Throughput)
		case fit.Parallelism:
			err = d.Set(spec.Param(st.ip+".parallelism"), r.Parallelism)
		case fit.Queue:
			err = d.Set(spec.Param(st.ip+".queue"), r.Queue)
		case fit.Overhead:
			err = d.Set(spec.Param(st.vertex+".overhead"), r.Overhead)
		}
		if err != nil {
			return fmt.Errorf("--write: %w", err)
		}
	}
	if _, err := d.Spec(); err != nil {
		return fmt.Errorf("--write: the fitted specification does not validate: %w", err)
	}
	return nil
}

func writeFitText(w io.Writer, r *FitResult) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	stage := r.IP
	if r.Vertex != "" {
		stage += " (vertex " + r.Vertex + ")"
	}
	fmt.Fprintf(tw, "stage\t%s\n", stage)
	fmt.Fprintf(tw, "request size\t%s\n", units.FormatSize(math.Round(float64(r.Size))))
	fmt.Fprintf(tw, "fitted\t%s\n", strings.Join(r.Fitted, ", "))
	fmt.Fprintf(tw, "throughput\t%s\n", units.FormatRate(float64(r.Throughput)))
	fmt.Fprintf(tw, "parallelism\t%g\n", float64(r.Parallelism))
	q := fmt.Sprintf("%g", float64(r.Queue))
	if math.IsInf(float64(r.Queue), 1) {
		q = "unbounded"
	}
	fmt.Fprintf(tw, "queue\t%s\n", q)
	fmt.Fprintf(tw, "overhead\t%s\n", units.FormatTime(float64(r.Overhead)))
	fmt.Fprintf(tw, "distance (%s)\tRMS %.3f, max %.3f\n", r.Distance, float64(r.RMS), float64(r.MaxErr))
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "LOAD\tLATENCY\tMODEL LATENCY AT LOAD\tMODEL LOAD AT LATENCY\t")
	for _, p := range r.Points {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t\n", units.FormatRate(float64(p.Load)), units.FormatTime(float64(p.Latency)),
			units.FormatTime(float64(p.Model)), units.FormatRate(float64(p.ModelLoad)))
	}
	return tw.Flush()
}
