package fit

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
)

// ProfileSchema is the schema of `dpperf profile --json` files.
const ProfileSchema = "dpperf.profile/v1"

// maxProfile is the largest profile file ReadProfile accepts.
const maxProfile = 64 << 20

// Profile is what a model of an I/O path needs from one `dpperf profile
// --json` report (profile/report/schema.md): per group of requests the
// load and, per stage, the mean latency.
type Profile struct {
	Name   string // file name, for messages
	Path   string // the I/O path (block, nvme-tcp, ...)
	Groups []ProfileGroup
}

// ProfileGroup is one group of requests (e.g. read 4KiB).
type ProfileGroup struct {
	Key       string
	Requests  int     // requests profiled (0: not in the profile)
	Bytes     float64 // request size
	IOPS      float64 // requests per second
	Occupancy float64 // mean requests in flight
	Latency   float64 // mean end-to-end latency, s
	Stages    []ProfileStage
	// Partial are the merged stages that only some requests pass: those
	// that missed an event between two stages (e.g. "target-device+
	// resp-net-recv"). They are not stages of the path and are left out
	// of Stages; their requests' time is close to that of the stages they
	// cover.
	Partial []ProfileStage
}

// ProfileStage is one stage of a group, in path order.
type ProfileStage struct {
	Name     string
	Queue    string // central-fcfs, split-fcfs or central-ps
	Cause    string
	Latency  float64 // mean, s
	Min      float64 // fastest request, s (0: not in the profile)
	Median   float64 // s (0: not in the profile)
	Requests int     // requests that passed the stage
}

// Load returns the group's load in bytes per second.
func (g *ProfileGroup) Load() float64 { return g.IOPS * g.Bytes }

type profileJSON struct {
	Schema string `json:"schema"`
	Path   string `json:"path"`
	Groups []struct {
		Key       string  `json:"key"`
		Requests  int     `json:"requests"`
		Bytes     float64 `json:"bytes"`
		IOPS      float64 `json:"iops"`
		Occupancy float64 `json:"occupancy"`
		Latency   struct {
			Mean float64 `json:"mean_ns"`
		} `json:"latency"`
		Stages []struct {
			Name    string `json:"name"`
			Queue   string `json:"queue"`
			Cause   string `json:"cause"`
			Merged  bool   `json:"merged"`
			Latency struct {
				Count       int     `json:"count"`
				Min         float64 `json:"min_ns"`
				Mean        float64 `json:"mean_ns"`
				Percentiles []struct {
					P  float64 `json:"p"`
					Ns float64 `json:"ns"`
				} `json:"percentiles"`
			} `json:"latency"`
		} `json:"stages"`
	} `json:"groups"`
}

// ReadProfile reads a profile report; name is used in errors, which name
// the field.
func ReadProfile(r io.Reader, name string) (*Profile, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxProfile+1))
	if err != nil {
		return nil, fmt.Errorf("%s: read profile: %w", name, err)
	}
	if len(data) > maxProfile {
		return nil, fmt.Errorf("%s: profile larger than 64 MiB", name)
	}
	var j profileJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return nil, fmt.Errorf("%s: profile json: %v", name, err)
	}
	if j.Schema != ProfileSchema {
		return nil, fmt.Errorf("%s: schema: want %q, got %q", name, ProfileSchema, j.Schema)
	}
	p := &Profile{Name: name, Path: j.Path}
	if len(j.Groups) == 0 {
		return nil, fmt.Errorf("%s: groups: none (a profile with requests is needed)", name)
	}
	pos := func(v float64) bool { return v > 0 && !math.IsInf(v, 0) }
	for gi, g := range j.Groups {
		at := fmt.Sprintf("%s: groups[%d]", name, gi)
		if !pos(g.Bytes) {
			return nil, fmt.Errorf("%s.bytes: want a positive size, got %v (group by size)", at, g.Bytes)
		}
		if !pos(g.IOPS) {
			return nil, fmt.Errorf("%s.iops: want a positive rate, got %v (a profile with its throughput part)", at, g.IOPS)
		}
		if len(g.Stages) == 0 {
			return nil, fmt.Errorf("%s.stages: none (a profile with its breakdown part)", at)
		}
		pg := ProfileGroup{Key: g.Key, Requests: g.Requests, Bytes: g.Bytes, IOPS: g.IOPS, Occupancy: g.Occupancy, Latency: g.Latency.Mean * 1e-9}
		for si, s := range g.Stages {
			if !pos(s.Latency.Mean) {
				return nil, fmt.Errorf("%s.stages[%d].latency.mean_ns: want a positive time, got %v", at, si, s.Latency.Mean)
			}
			if s.Name == "" {
				return nil, fmt.Errorf("%s.stages[%d].name: missing", at, si)
			}
			ps := ProfileStage{Name: s.Name, Queue: s.Queue, Cause: s.Cause, Latency: s.Latency.Mean * 1e-9, Requests: s.Latency.Count}
			if s.Latency.Min > 0 && s.Latency.Min <= s.Latency.Mean {
				ps.Min = s.Latency.Min * 1e-9
			}
			for _, q := range s.Latency.Percentiles {
				if q.P == 50 && q.Ns >= s.Latency.Min && q.Ns > 0 && !math.IsInf(q.Ns, 0) {
					ps.Median = q.Ns * 1e-9
				}
			}
			if s.Merged && s.Latency.Count < g.Requests {
				pg.Partial = append(pg.Partial, ps)
				continue
			}
			pg.Stages = append(pg.Stages, ps)
		}
		if len(pg.Stages) == 0 {
			return nil, fmt.Errorf("%s.stages: only merged stages that some requests pass", at)
		}
		p.Groups = append(p.Groups, pg)
	}
	return p, nil
}

// Group returns the group with the given key, or the first (the one with
// the most requests) when key is empty.
func (p *Profile) Group(key string) (*ProfileGroup, error) {
	if key == "" {
		return &p.Groups[0], nil
	}
	for i := range p.Groups {
		if p.Groups[i].Key == key {
			return &p.Groups[i], nil
		}
	}
	return nil, fmt.Errorf("%s: groups: no group %q", p.Name, key)
}
