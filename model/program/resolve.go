package program

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dpperf/dpperf/model/spec"
)

// DefaultTarget is the target of a program stage that names none.
const DefaultTarget = "nfp-agilio-cx"

// Options say how program stages get their service times.
type Options struct {
	// Trace, if set, is a pcap/pcapng of the traffic: every program stage
	// then runs in the mean time of the trace's packets (deployment
	// specific) instead of the worst case.
	Trace string
	// CacheDir keeps computed bounds by content hash ("" : no cache).
	CacheDir string
	// Solver is the SMT solver command (default z3 -in -smt2).
	Solver []string
	// Timeout per solver query (default 2 s).
	Timeout time.Duration
	// Workers is the number of solver processes (0: one).
	Workers int
}

// Stage is a program stage of a specification with the service time it
// got.
type Stage struct {
	Vertex     string  // GRAPH.VERTEX
	Source     string  // the bound file, or object (target)
	Program    string  // program name
	Target     string  // target name
	Basis      string  // calibrated or estimated (the target's)
	How        string  // "worst case" (the bound's slowest path) or "trace mean"
	Engines    int     // engines the rate spans
	Rate       float64 // packets/s of all the engines
	Service    float64 // s per packet on one engine
	Bottleneck string  // component that binds the rate
	Packets    int     // priced packets of the trace (trace mean only)
}

// Resolve sets the service time of every vertex of s that names a
// program; dir is the directory of the specification file, against which
// the vertices' paths are read. It returns the stages it set.
func Resolve(ctx context.Context, s *spec.Spec, dir string, o Options) ([]Stage, error) {
	var out []Stage
	for gi := range s.Graphs {
		g := &s.Graphs[gi]
		for vi := range g.Vertices {
			v := &g.Vertices[vi]
			if v.Program == nil {
				continue
			}
			field := fmt.Sprintf("software.graphs[%d].vertices[%d].program", gi, vi)
			st, err := resolve(ctx, v.Program, dir, o)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", field, err)
			}
			st.Vertex = g.Name + "." + v.Name
			st.Engines = v.Program.Engines
			if st.Engines == 0 {
				st.Engines = s.Hardware.IPs[s.Hardware.IPByName(v.IP)].Parallelism
			}
			st.Service = float64(st.Engines) / st.Rate
			// The flow compiles P = D_IP·g/Service: with engines given
			// explicitly, scale to the IP's engines.
			v.Service = st.Service
			out = append(out, st)
		}
	}
	return out, nil
}

// resolve finds the rate of one program stage.
func resolve(ctx context.Context, p *spec.Program, dir string, o Options) (Stage, error) {
	var b *Bound
	var object, name, tgt string
	var src string
	if p.Bound != "" {
		name := rel(dir, p.Bound)
		data, err := os.ReadFile(name)
		if err != nil {
			return Stage{}, fmt.Errorf("bound: read %s: %w", name, unwrap(err))
		}
		if b, err = ReadBound(bytes.NewReader(data), name); err != nil {
			return Stage{}, err
		}
		src = p.Bound
		object, name, tgt = b.File, b.Program, b.Target
		if o.Trace != "" {
			object = findObject(dir, filepath.Dir(name), b.File)
		}
	} else {
		object, name, tgt = rel(dir, p.Object), p.Name, p.Target
		if tgt == "" {
			tgt = DefaultTarget
		}
		src = p.Object
		if o.Trace == "" {
			var err error
			if b, err = Compute(ctx, object, name, tgt, o); err != nil {
				return Stage{}, err
			}
		}
	}
	if o.Trace != "" {
		st, err := traceMean(ctx, object, name, tgt, o)
		if err != nil {
			return Stage{}, err
		}
		st.Source = src
		return st, nil
	}
	return Stage{Source: src, Program: b.Program, Target: b.Target, Basis: b.Basis, How: "worst case",
		Rate: b.PathRate, Bottleneck: b.Bottleneck}, nil
}

// rel reads name against dir unless it is absolute.
func rel(dir, name string) string {
	if filepath.IsAbs(name) || dir == "" {
		return name
	}
	return filepath.Join(dir, name)
}

// findObject locates the object a bound file names: as written (relative
// to the directory the bound ran in, usually the working directory), then
// beside the bound file, then beside the specification.
func findObject(specDir, boundDir, file string) string {
	for _, c := range []string{file, filepath.Join(boundDir, filepath.Base(file)), rel(specDir, file)} {
		if _, err := os.Stat(c); err == nil {
			return c
		}
	}
	return file
}

// unwrap drops the operation and path of an *os.PathError.
func unwrap(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// Text describes a stage in one line.
func (s Stage) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s runs %s from %s (%s, %s): %.4gus per packet per engine, %.4g Mpps on %d engines, bottleneck %s",
		s.Vertex, s.Program, s.Source, s.Target, s.How, s.Service*1e6, s.Rate/1e6, s.Engines, s.Bottleneck)
	if s.Packets > 0 {
		fmt.Fprintf(&b, ", mean of %d packets", s.Packets)
	}
	return b.String()
}

// WriteStages lists the stages that got their service time from a
// program, under a text result; nothing without stages.
func WriteStages(w io.Writer, stages []Stage) error {
	if len(stages) == 0 {
		return nil
	}
	fmt.Fprintln(w, "\nprogram stages (service time from the program):")
	for _, s := range stages {
		if _, err := fmt.Fprintln(w, "  "+s.Text()); err != nil {
			return err
		}
	}
	return nil
}
