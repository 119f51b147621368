package profiling

import (
	"os"
	"strings"

	"github.com/dpperf/dpperf/internal/fail"
	"github.com/dpperf/dpperf/profile/analyze"
	"github.com/dpperf/dpperf/profile/report"
)

// Compare reads the JSON profiles base and loaded and compares them
// group by group; it also returns the loaded profile.
func Compare(base, loaded string) (*analyze.Comparison, *analyze.Profile, error) {
	var profs [2]*analyze.Profile
	for i, name := range []string{base, loaded} {
		f, err := os.Open(name)
		if err != nil {
			return nil, nil, fail.Input(name, err)
		}
		profs[i], err = report.ReadProfile(f)
		f.Close()
		if err != nil {
			return nil, nil, fail.Input(name, err)
		}
		if c := profs[i].Contents; !c.Has(analyze.ContentLatency) || !c.Has(analyze.ContentBreakdown) {
			return nil, nil, fail.Inputf(name, "profile has only %s; compare needs latency and breakdown", strings.Join(c, ","))
		}
	}
	c := analyze.Compare(profs[0], profs[1], base, loaded)
	if len(c.Groups) == 0 {
		return nil, nil, fail.Inputf(loaded, "no group in common with %s (%s)", base, strings.Join(c.Unmatched, "; "))
	}
	return c, profs[1], nil
}
