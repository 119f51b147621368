// Package program gives model stages that run a packet program their
// service time from the program itself: a stage (spec.Vertex) naming a
// `dpperf bound --json` result, or an object file and a target whose
// bound is computed here through package bound and cached by content
// hash, runs each request in the time the bound's slowest path takes one
// engine; with a trace, in the mean time of the trace's packets
// (deployment-specific, as `dpperf interface --trace` prices them).
//
// Imports go one way: model/program → bound, cfg, target, replay and
// model/spec; nothing under bound imports the model.
package program

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
)

// Schema is the bound result schema this package reads.
const Schema = "dpperf.bound/v1"

// maxBound is the largest bound result file ReadBound accepts.
const maxBound = 64 << 20

// Bound is the part of a `dpperf bound --json` result a model stage needs.
type Bound struct {
	File       string             // object file the bound is for
	Program    string             // program name
	Section    string             // its section
	Target     string             // target name
	Kind       string             // ssp, naive or intermediate
	Basis      string             // calibrated or estimated
	PathRate   float64            // packets/s of the slowest path before fixed limits (all engines)
	Bottleneck string             // component of the slowest path that binds it
	Cost       map[string]float64 // the slowest path's cost per component
	Components []Component
}

// Component is one component of the bound's target.
type Component struct {
	Name     string  `json:"name"`
	Unit     string  `json:"unit"`
	Capacity float64 `json:"capacity"`
}

type boundJSON struct {
	Schema  string `json:"schema"`
	Program struct {
		File    string `json:"file"`
		Name    string `json:"name"`
		Section string `json:"section"`
	} `json:"program"`
	Target struct {
		Name       string      `json:"name"`
		Components []Component `json:"components"`
	} `json:"target"`
	Kind  string `json:"kind"`
	Basis string `json:"basis"`
	Bound *struct {
		PacketRate float64 `json:"packet_rate"`
		PathRate   float64 `json:"path_rate"`
		Bottleneck string  `json:"bottleneck"`
	} `json:"bound"`
	Paths []struct {
		Bottleneck string             `json:"bottleneck"`
		Cost       map[string]float64 `json:"cost"`
	} `json:"paths"`
}

// ReadBound reads a bound result; name is used in errors.
func ReadBound(r io.Reader, name string) (*Bound, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxBound+1))
	if err != nil {
		return nil, fmt.Errorf("%s: read bound: %w", name, err)
	}
	if len(data) > maxBound {
		return nil, fmt.Errorf("%s: bound file larger than 64 MiB", name)
	}
	var j boundJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return nil, fmt.Errorf("%s: bound json: %v", name, err)
	}
	if j.Schema != Schema {
		return nil, fmt.Errorf("%s: schema: want %q, got %q", name, Schema, j.Schema)
	}
	if j.Bound == nil {
		return nil, fmt.Errorf("%s: bound: missing", name)
	}
	rate := j.Bound.PathRate
	if rate == 0 {
		rate = j.Bound.PacketRate
	}
	if !(rate > 0) || math.IsInf(rate, 0) {
		return nil, fmt.Errorf("%s: bound.path_rate: want a positive packet rate, got %v", name, rate)
	}
	b := &Bound{File: j.Program.File, Program: j.Program.Name, Section: j.Program.Section, Target: j.Target.Name,
		Kind: j.Kind, Basis: j.Basis, PathRate: rate, Bottleneck: j.Bound.Bottleneck, Components: j.Target.Components}
	if len(j.Paths) > 0 {
		b.Cost = j.Paths[0].Cost
		if j.Paths[0].Bottleneck != "" {
			b.Bottleneck = j.Paths[0].Bottleneck
		}
	}
	return b, nil
}

// Capacity returns the capacity (units/s) of the named component, or 0.
func (b *Bound) Capacity(name string) float64 {
	for _, c := range b.Components {
		if c.Name == name {
			return c.Capacity
		}
	}
	return 0
}
