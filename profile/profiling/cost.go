package profiling

import (
	"fmt"
	"time"

	"github.com/dpperf/dpperf/profile/analyze"
	"github.com/dpperf/dpperf/profile/collect"
)

// describeBPF adds to prof what only the BPF collector knows: its
// programs, their own run time (with Stats) and the requests whose
// in-kernel record was overwritten.
func (l *Live) describeBPF(prof *analyze.Profile, b *collect.BPF, stats analyze.BuildStats) {
	prof.Source += " (" + b.Programs().String() + ")"
	if k := collectorCost(b.Cost()); l.Stats && k.Runs > 0 {
		total := time.Duration(k.TotalNS)
		if stats.Records > 0 {
			k.NSPerReq = float64(total.Nanoseconds()) / float64(stats.Records)
		}
		if prof.Window.Seconds > 0 {
			k.CPUPercent = 100 * total.Seconds() / prof.Window.Seconds
		}
		prof.Collector = k
	}
	prof.Counts.Restarted += b.Overwritten()
}

// bpfWarnings say how the BPF collector's programs left requests out.
func bpfWarnings(b *collect.BPF) []string {
	var out []string
	if w, per, share := b.Duty(); per > 0 {
		out = append(out, fmt.Sprintf("sampled in windows: the programs were attached for %v of every %v (and until the requests started in it finished) and kept %.3g%% of the requests in them", w, per, 100*share))
	}
	if b.Programs() == collect.ProgramsEmpty {
		out = append(out, "empty programs (--bpf-programs empty): attached to measure what attaching costs; nothing was recorded")
	}
	return out
}

// collectorCost sums the programs' kernel run time.
func collectorCost(progs []collect.ProgramCost) *analyze.CollectorCost {
	k := &analyze.CollectorCost{}
	for _, p := range progs {
		k.Runs += p.Runs
		k.TotalNS += p.Runtime.Nanoseconds()
		pc := analyze.ProgramCost{Name: p.Name, Runs: p.Runs}
		if p.Runs > 0 {
			pc.NSPerRun = float64(p.Runtime.Nanoseconds()) / float64(p.Runs)
		}
		k.Programs = append(k.Programs, pc)
	}
	if k.Runs > 0 {
		k.NSPerRun = float64(k.TotalNS) / float64(k.Runs)
	}
	return k
}
