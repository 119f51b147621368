package analyze

import (
	"fmt"
	"sort"
)

// CompareSchema identifies the JSON form of a Comparison.
const CompareSchema = "dpperf.profile.compare/v1"

// Comparison holds the Latency Amplification Degree (LAD = loaded mean /
// base mean) of every stage of every group present in both profiles.
type Comparison struct {
	Schema string     `json:"schema"`
	Base   string     `json:"base"`
	Loaded string     `json:"loaded"`
	Groups []GroupCmp `json:"groups"`
	// Unmatched lists group keys found in only one of the profiles.
	Unmatched []string `json:"unmatched,omitempty"`
}

// GroupCmp compares one group.
type GroupCmp struct {
	Key          string     `json:"key"`
	BaseMeanNS   float64    `json:"base_mean_ns"`
	LoadedMeanNS float64    `json:"loaded_mean_ns"`
	LAD          float64    `json:"lad"`
	Stages       []StageCmp `json:"stages"`
	// Bottleneck names the stages that dominate the latency increase, the
	// largest first, and Cause the resource class of the first one.
	Bottleneck []string `json:"bottleneck"`
	Cause      string   `json:"cause"`
	Verdict    string   `json:"verdict"`
}

// StageCmp compares one stage of a group.
type StageCmp struct {
	Name         string  `json:"name"`
	Cause        string  `json:"cause"`
	BaseMeanNS   float64 `json:"base_mean_ns"`
	LoadedMeanNS float64 `json:"loaded_mean_ns"`
	LAD          float64 `json:"lad"`      // 0 when the stage is missing in one profile
	DeltaNS      float64 `json:"delta_ns"` // loaded - base mean
	// ShareOfIncrease is DeltaNS over the end-to-end mean increase.
	ShareOfIncrease float64 `json:"share_of_increase"`
}

// DominantShare is the part of the end-to-end increase a stage must carry
// to be named a bottleneck alongside the largest contributor.
const DominantShare = 0.25

// Compare computes per-stage LADs for groups with the same key.
func Compare(base, loaded *Profile, baseName, loadedName string) *Comparison {
	c := &Comparison{Schema: CompareSchema, Base: baseName, Loaded: loadedName}
	bg := map[string]*Group{}
	for i := range base.Groups {
		bg[base.Groups[i].Key] = &base.Groups[i]
	}
	seen := map[string]bool{}
	for i := range loaded.Groups {
		lg := &loaded.Groups[i]
		b, ok := bg[lg.Key]
		if !ok {
			c.Unmatched = append(c.Unmatched, "loaded only: "+lg.Key)
			continue
		}
		seen[lg.Key] = true
		c.Groups = append(c.Groups, compareGroup(b, lg))
	}
	for _, g := range base.Groups {
		if !seen[g.Key] {
			c.Unmatched = append(c.Unmatched, "base only: "+g.Key)
		}
	}
	return c
}

func compareGroup(b, l *Group) GroupCmp {
	g := GroupCmp{Key: l.Key, BaseMeanNS: b.Latency.MeanNS, LoadedMeanNS: l.Latency.MeanNS, LAD: ratio(l.Latency.MeanNS, b.Latency.MeanNS)}
	total := g.LoadedMeanNS - g.BaseMeanNS
	bs := map[string]*Stage{}
	for i := range b.Stages {
		bs[b.Stages[i].Name] = &b.Stages[i]
	}
	done := map[string]bool{}
	// bm, lm are the stage means; bw, lw the same weighted by the share of
	// requests that passed through the stage (merged stages may cover only
	// some requests), which is the stage's part of the end-to-end mean.
	add := func(name, cause string, bm, lm, bw, lw float64) {
		s := StageCmp{Name: name, Cause: cause, BaseMeanNS: bm, LoadedMeanNS: lm, DeltaNS: lw - bw}
		if bm > 0 && lm > 0 {
			s.LAD = lm / bm
		}
		if total > 0 {
			s.ShareOfIncrease = s.DeltaNS / total
		}
		g.Stages = append(g.Stages, s)
	}
	for _, s := range l.Stages {
		var bm, bw float64
		if x := bs[s.Name]; x != nil {
			bm, bw = x.Latency.MeanNS, x.Latency.MeanNS*frac(x.Latency.Count, b.Requests)
		}
		add(s.Name, s.Cause, bm, s.Latency.MeanNS, bw, s.Latency.MeanNS*frac(s.Latency.Count, l.Requests))
		done[s.Name] = true
	}
	for _, s := range b.Stages {
		if !done[s.Name] {
			add(s.Name, s.Cause, s.Latency.MeanNS, 0, s.Latency.MeanNS*frac(s.Latency.Count, b.Requests), 0)
		}
	}
	order := make([]int, len(g.Stages))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool { return g.Stages[order[i]].DeltaNS > g.Stages[order[j]].DeltaNS })
	if total <= 0 || len(order) == 0 || g.Stages[order[0]].DeltaNS <= 0 {
		g.Verdict = "no latency increase"
		return g
	}
	for k, i := range order {
		s := g.Stages[i]
		if k == 0 || s.ShareOfIncrease >= DominantShare {
			g.Bottleneck = append(g.Bottleneck, s.Name)
		}
	}
	top := g.Stages[order[0]]
	g.Cause = top.Cause
	g.Verdict = fmt.Sprintf("%s dominates: +%s of +%s (%.0f%%), LAD %.2f; likely cause: %s", top.Name,
		FormatNS(top.DeltaNS), FormatNS(total), 100*top.ShareOfIncrease, top.LAD, causeText(top.Cause))
	return g
}

func causeText(c string) string {
	switch c {
	case "cpu":
		return "CPU core (processing on the submitting or completing core)"
	case "queue":
		return "connection/queue (requests wait for a queue slot or tag)"
	case "device":
		return "device (the disk or backend serves more slowly)"
	case "network":
		return "network (TCP/IP stack or link)"
	}
	return c
}

func frac(a, b uint64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// FormatNS prints a duration in ns with a unit chosen for reading: ns, µs,
// ms or s with three significant digits.
func FormatNS(ns float64) string {
	neg := ""
	if ns < 0 {
		neg, ns = "-", -ns
	}
	switch {
	case ns < 1e3:
		return fmt.Sprintf("%s%.0fns", neg, ns)
	case ns < 1e6:
		return neg + sig(ns/1e3) + "µs"
	case ns < 1e9:
		return neg + sig(ns/1e6) + "ms"
	}
	return neg + sig(ns/1e9) + "s"
}

func sig(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

// Above returns the first group whose LAD over the whole span exceeds
// max, or nil.
func (c *Comparison) Above(max float64) *GroupCmp {
	for i := range c.Groups {
		if c.Groups[i].LAD > max {
			return &c.Groups[i]
		}
	}
	return nil
}
