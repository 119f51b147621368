package fit

import (
	"github.com/dpperf/dpperf/units"
)

// Schemas of the reports (json.md).
const (
	CurveSchema = "dpperf.model.fit/v1"
	PathSchema  = "dpperf.model.fitpath/v1"
)

// CurveReport is a stage fitted to a curve (`dpperf model fit --curve`),
// as JSON.
type CurveReport struct {
	Schema      string       `json:"schema"`
	IP          string       `json:"ip"`
	Vertex      string       `json:"vertex"`
	Fitted      []string     `json:"fitted"`
	Size        units.Num    `json:"size_B"`
	Throughput  units.Num    `json:"throughput_Bps"`
	Parallelism units.Num    `json:"parallelism"`
	Queue       units.Num    `json:"queue"`
	Overhead    units.Num    `json:"overhead_s"`
	Distance    string       `json:"distance"`
	RMS         units.Num    `json:"rms_distance"`
	MaxErr      units.Num    `json:"max_distance"`
	Evaluations int          `json:"evaluations"`
	Points      []CurvePoint `json:"points"`
}

// CurvePoint is one measured point of the curve beside the fitted model.
type CurvePoint struct {
	Load      units.Num `json:"load_Bps"`
	Latency   units.Num `json:"latency_s"`
	Model     units.Num `json:"model_latency_s"` // at the measured load
	ModelLoad units.Num `json:"model_load_Bps"`  // at the measured latency
}

func newCurveReport(t Target, o Options, pts []Point, res *Result) *CurveReport {
	r := &CurveReport{Schema: CurveSchema, IP: t.IP, Vertex: t.Vertex, Fitted: o.Free, Size: units.Num(res.Size),
		Throughput: units.Num(res.Throughput), Parallelism: units.Num(res.Parallelism), Queue: units.Num(res.Queue),
		Overhead: units.Num(res.Overhead), Distance: o.Distance, RMS: units.Num(res.RMS), MaxErr: units.Num(res.MaxErr), Evaluations: res.Evaluations}
	for i, pt := range pts {
		r.Points = append(r.Points, CurvePoint{Load: units.Num(pt.Load), Latency: units.Num(pt.Latency), Model: units.Num(res.Predicted[i]),
			ModelLoad: units.Num(res.LoadAt[i])})
	}
	return r
}

// PathReport is a model of an I/O path fitted to profiles (`dpperf model
// fit --profile`), as JSON.
type PathReport struct {
	Schema string        `json:"schema"`
	Path   string        `json:"path"`
	Group  string        `json:"group"`
	From   []string      `json:"profiles"`
	Size   units.Num     `json:"size_B"`
	Stages []FittedStage `json:"stages"`
	Check  *PathCheck    `json:"check,omitempty"`
}

// FittedStage is one fitted stage of a path.
type FittedStage struct {
	Name        string    `json:"name"`
	Queue       string    `json:"queue"`
	Fitted      []string  `json:"fitted"`
	Throughput  units.Num `json:"throughput_Bps"`
	Parallelism units.Num `json:"parallelism"`
	Service     units.Num `json:"service_s"` // per request on one engine
}

// PathCheck is the model against a profile at another load.
type PathCheck struct {
	Profile string       `json:"profile"`
	Load    units.Num    `json:"load_Bps"`
	Rows    []StageCheck `json:"rows"`
}

// StageCheck is the measured and the predicted mean latency of one stage
// (or of the whole path) in a check.
type StageCheck struct {
	Stage    string    `json:"stage"`
	Measured units.Num `json:"measured_s"`
	Model    units.Num `json:"model_s"` // null past saturation
	Error    units.Num `json:"relative_error"`
	Rho      units.Num `json:"rho"`
}

// Report returns the fitted path as JSON and, with check not nil, the
// model against that profile at its load (Check).
func (pf *PathFit) Report(check *Profile) (*PathReport, error) {
	r := &PathReport{Schema: PathSchema, Path: pf.Path, Group: pf.Group, From: pf.From, Size: units.Num(pf.Size)}
	for _, s := range pf.Stages {
		r.Stages = append(r.Stages, FittedStage{Name: s.Name, Queue: s.Queue, Fitted: s.Fitted, Throughput: units.Num(s.Throughput),
			Parallelism: units.Num(s.Parallelism), Service: units.Num(s.Parallelism * pf.Size / s.Throughput)})
	}
	if check == nil {
		return r, nil
	}
	rows, err := pf.Check(check)
	if err != nil {
		return nil, err
	}
	g, _ := check.Group(pf.Group)
	r.Check = &PathCheck{Profile: check.Name, Load: units.Num(g.Load())}
	for _, row := range rows {
		r.Check.Rows = append(r.Check.Rows, StageCheck{Stage: row.Stage, Measured: units.Num(row.Measured), Model: units.Num(row.Model),
			Error: units.Num(row.Error()), Rho: units.Num(row.Rho)})
	}
	return r, nil
}
