package analyze

import "strings"

// Report contents a task can ask for (task report.contents).
const (
	ContentLatency    = "latency"    // end-to-end latency distribution per group
	ContentThroughput = "throughput" // IOPS and MB/s per group
	ContentBreakdown  = "breakdown"  // per-stage latencies and shares
	ContentQueue      = "queue"      // requests in flight per group and per stage (Little's law)
)

// Contents lists the parts a profile carries; empty means all of them
// (also for profiles written before the field existed).
type Contents []string

// Has reports whether part is among the contents.
func (c Contents) Has(part string) bool {
	if len(c) == 0 {
		return true
	}
	for _, x := range c {
		if strings.EqualFold(x, part) {
			return true
		}
	}
	return false
}

// Restrict removes from p the parts contents leaves out, and records
// contents in p.Contents so that every report (text, JSON, HTML) shows
// the same parts. Counts and request totals always stay.
func (p *Profile) Restrict(contents []string) {
	c := Contents(contents)
	p.Contents = nil
	if len(c) > 0 {
		for _, part := range []string{ContentLatency, ContentThroughput, ContentBreakdown, ContentQueue} {
			if c.Has(part) {
				p.Contents = append(p.Contents, part)
			}
		}
		if len(p.Contents) == 4 {
			p.Contents = nil
		}
	}
	for i := range p.Groups {
		g := &p.Groups[i]
		if !c.Has(ContentLatency) {
			g.Latency, g.Distribution = Dist{}, nil
		}
		if !c.Has(ContentThroughput) {
			g.IOPS, g.MBps = 0, 0
		}
		if !c.Has(ContentBreakdown) {
			g.Stages = nil
		}
		if !c.Has(ContentQueue) {
			g.Occupancy = 0
			for j := range g.Stages {
				g.Stages[j].Occupancy, g.Stages[j].ArrivalRate = 0, 0
			}
		}
	}
}
