package fit

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/dpperf/dpperf/model/analytic"
	"github.com/dpperf/dpperf/model/flow"
	"github.com/dpperf/dpperf/model/spec"
)

// PathOptions say how the stages of an I/O path are fitted to profiles.
type PathOptions struct {
	Group string // group key (empty: each profile's first)
	// Parallelism is the engines of split-fcfs stages (work split over
	// several servers); 0 (auto): fitted to two or more profiles, and
	// estimated by Engines from a single one. Central stages have one
	// server.
	Parallelism int
}

// PathStage is one fitted stage of a path.
type PathStage struct {
	Name  string
	Queue string
	Cause string
	Stage
	Fitted []string // the parameters fitted or estimated; the others were fixed
}

// EstimatedParallelism in PathStage.Fitted: the engines were estimated
// from a single profile (Engines).
const EstimatedParallelism = "parallelism (Little's law)"

// PathFit is a model of an I/O path: one station per profiled stage, in
// path order, each an M/M/1 queue per engine (eq. 7 and 12) whose mean
// latency at the profiles' loads is the profiled mean.
type PathFit struct {
	Path   string
	Group  string
	Size   float64 // request size, bytes
	Load   float64 // load of the first profile, B/s
	Stages []PathStage
	From   []string // the profiles' names
}

// FitPath fits a model of the path the profiles (one or more loads of
// the same path and request group) report. Each stage is fitted on its
// own to its mean latencies at the profiles' loads, with no overhead and
// unbounded queues: central stages fit their throughput with one engine;
// split stages their throughput at o.Parallelism engines, or, with
// o.Parallelism 0, throughput and engines to several profiles, and their
// throughput at the engines Engines estimates from a single one.
func FitPath(profiles []*Profile, o PathOptions) (*PathFit, error) {
	if len(profiles) == 0 {
		return nil, fmt.Errorf("fit path: no profile")
	}
	var groups []*ProfileGroup
	for _, p := range profiles {
		g, err := p.Group(o.Group)
		if err != nil {
			return nil, err
		}
		if p.Path != profiles[0].Path {
			return nil, fmt.Errorf("%s: path: %q, but %s profiles %q", p.Name, p.Path, profiles[0].Name, profiles[0].Path)
		}
		if g.Key != groups0(groups, g).Key || !sameStages(g, groups0(groups, g)) {
			return nil, fmt.Errorf("%s: groups: group %q with stages %s differs from %s's", p.Name, g.Key, stageNames(g), profiles[0].Name)
		}
		groups = append(groups, g)
	}
	pf := &PathFit{Path: profiles[0].Path, Group: groups[0].Key, Size: groups[0].Bytes, Load: groups[0].Load()}
	for _, p := range profiles {
		pf.From = append(pf.From, p.Name)
	}
	for si, s := range groups[0].Stages {
		var pts []Point
		for _, g := range groups {
			pts = append(pts, Point{Load: g.Load(), Latency: g.Stages[si].Latency, Size: g.Bytes})
		}
		free := []string{Throughput}
		fitted := free
		fixed := Stage{Parallelism: 1, Queue: math.Inf(1)}
		if s.Queue == "split-fcfs" {
			switch {
			case o.Parallelism > 0:
				fixed.Parallelism = float64(o.Parallelism)
			case len(pts) > 1:
				free = append(free, Parallelism)
				fitted = free
			default:
				fixed.Parallelism = Engines(groups[0], &groups[0].Stages[si])
				fitted = []string{Throughput, EstimatedParallelism}
			}
		}
		r, err := Fit(pts, Options{Free: free, Fixed: fixed, Distance: Vertical, MaxParallelism: 256})
		if err != nil {
			return nil, fmt.Errorf("stage %s: %w", s.Name, err)
		}
		pf.Stages = append(pf.Stages, PathStage{Name: s.Name, Queue: s.Queue, Cause: s.Cause, Stage: r.Stage, Fitted: fitted})
	}
	return pf, nil
}

func groups0(gs []*ProfileGroup, g *ProfileGroup) *ProfileGroup {
	if len(gs) == 0 {
		return g
	}
	return gs[0]
}

func sameStages(a, b *ProfileGroup) bool {
	return stageNames(a) == stageNames(b)
}

func stageNames(g *ProfileGroup) string {
	var n []string
	for _, s := range g.Stages {
		n = append(n, s.Name)
	}
	return strings.Join(n, ",")
}

// kinds maps a stage's cause onto an IP kind of the specification.
var kinds = map[string]string{"cpu": "core", "device": "ssd", "network": "switch"}

// YAML writes the fitted path as a model specification: an IP and a
// vertex per stage, chained from ingress to egress, at the first
// profile's load and request size.
func (pf *PathFit) YAML() []byte {
	var b bytes.Buffer
	num := func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
	fmt.Fprintf(&b, "# The %s path (group %s) fitted by `dpperf model fit --profile` to %s:\n", pf.Path, pf.Group, strings.Join(pf.From, ", "))
	fmt.Fprintf(&b, "# one IP per profiled stage, D engines each an M/M/1 queue, no overhead.\n")
	fmt.Fprintf(&b, "name: %s\nhardware:\n  ips:\n", strconv.Quote(pf.Path))
	for _, s := range pf.Stages {
		kind := kinds[s.Cause]
		if kind == "" {
			kind = "other"
		}
		fmt.Fprintf(&b, "    - name: %s  # %s, %s; fitted: %s\n      kind: %s\n      parallelism: %d\n      throughput: %sB/s  # %.4gus per request per engine\n",
			strconv.Quote(s.Name), s.Queue, s.Cause, strings.Join(s.Fitted, ", "), kind, int(s.Parallelism), num(s.Throughput), s.Parallelism*pf.Size/s.Throughput*1e6)
	}
	fmt.Fprintf(&b, "software:\n  graphs:\n    - name: %s\n      vertices:\n", strconv.Quote(pf.Path))
	for _, s := range pf.Stages {
		fmt.Fprintf(&b, "        - {name: %s, ip: %s}\n", strconv.Quote(s.Name), strconv.Quote(s.Name))
	}
	b.WriteString("      edges:\n")
	prev := spec.Ingress
	for _, s := range pf.Stages {
		fmt.Fprintf(&b, "        - {from: %s, to: %s}\n", strconv.Quote(prev), strconv.Quote(s.Name))
		prev = s.Name
	}
	fmt.Fprintf(&b, "        - {from: %s, to: %s}\n", strconv.Quote(prev), spec.Egress)
	fmt.Fprintf(&b, "traffic:\n  ingress: %sB/s\n  size: %sB\n", num(pf.Load), num(pf.Size))
	return b.Bytes()
}

// Spec returns the fitted path as a validated specification.
func (pf *PathFit) Spec() (*spec.Spec, error) {
	return spec.Read(bytes.NewReader(pf.YAML()), "fitted "+pf.Path)
}

// CheckRow compares one stage (or the whole path) of a profile with the
// fitted model at the profile's load.
type CheckRow struct {
	Stage    string
	Measured float64 // mean latency, s
	Model    float64 // s (+Inf past saturation)
	Rho      float64 // the station's utilisation (end to end: the largest)
}

// Error returns the relative error of the model.
func (r CheckRow) Error() float64 { return (r.Model - r.Measured) / r.Measured }

// Check predicts the mean latency of every stage, and of the whole path
// (the last row), at the load of a profile of the same path and group,
// and sets them beside the measured ones.
func (pf *PathFit) Check(p *Profile) ([]CheckRow, error) {
	g, err := p.Group(pf.Group)
	if err != nil {
		return nil, err
	}
	if p.Path != pf.Path || len(g.Stages) != len(pf.Stages) {
		return nil, fmt.Errorf("%s: path %s with stages %s, the model has path %s with %d stages", p.Name, p.Path, stageNames(g), pf.Path, len(pf.Stages))
	}
	s, err := pf.Spec()
	if err != nil {
		return nil, err
	}
	s.Traffic.Ingress = g.Load()
	s.Traffic.Sizes = []spec.SizeShare{{Size: g.Bytes, Share: 1}}
	n, err := flow.Compile(s)
	if err != nil {
		return nil, err
	}
	r := analytic.Evaluate(n)
	var rows []CheckRow
	total := CheckRow{Stage: "end-to-end", Measured: g.Latency}
	lats := map[string]float64{}
	for _, nd := range r.Classes[0].Nodes {
		lats[nd.Name] = float64(nd.Latency)
	}
	for i, st := range g.Stages {
		rho := float64(r.Stations[n.Classes[0].Nodes[i+2].Station].Rho) // nodes 0 and 1 are ingress and egress
		lat := lats[pf.Stages[i].Name]
		if rho >= 1 {
			lat = math.Inf(1)
		}
		rows = append(rows, CheckRow{Stage: st.Name, Measured: st.Latency, Model: lat, Rho: rho})
		total.Model += lat
		total.Rho = math.Max(total.Rho, rho)
	}
	return append(rows, total), nil
}
