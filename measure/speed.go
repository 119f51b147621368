package measure

import (
	"math"

	"github.com/dpperf/dpperf/calibrate"
	"github.com/dpperf/dpperf/target"
	"github.com/dpperf/dpperf/testrun"
)

// speedTries is how many times a timing is taken again when the probe
// before it and the probe after it disagree by more than speedAgree: the
// core changed speed during the timing.
const (
	speedTries = 4
	speedAgree = 0.10
)

// speed times the calibration's speed probe before and after each timing
// of a replay, on the same CPU, so that the timing can also be read at the
// speed the calibration's costs were taken at (their high percentile: its
// slow state). A guarantee is priced for that state; a replay in a faster
// spell of the core says nothing about how tight it is there.
type speed struct {
	probe *calibrate.Probe
	high  float64 // the probe's time at the calibration's percentile
	cpu   int
}

// newSpeed loads the probe when t's calibration timed it; nil otherwise
// (built-in targets, calibrations older than the probe).
func newSpeed(t *target.Target, cpu int) (*speed, error) {
	if t == nil || t.Calibration == nil {
		return nil, nil
	}
	s, ok := t.Calibration.Spread[calibrate.SpeedKey]
	if !ok || s.High <= 0 {
		return nil, nil
	}
	p, err := calibrate.NewProbe()
	if err != nil {
		return nil, err
	}
	return &speed{probe: p, high: s.High, cpu: cpu}, nil
}

func (s *speed) close() {
	if s != nil {
		s.probe.Close()
	}
}

// around takes the timing f between two probe timings and returns f's
// figure with the factor that carries it to the calibration's slow state
// (high / the probes' mean). With no probe the factor is 0. When the two
// probes disagree the timing is taken again, up to speedTries times; the
// last is kept.
func (s *speed) around(f func() (float64, error)) (ns, factor float64, err error) {
	if s == nil {
		ns, err = f()
		return ns, 0, err
	}
	unpin, err := testrun.Pin(s.cpu)
	if err != nil {
		return 0, 0, err
	}
	defer unpin()
	for range speedTries {
		before, err := s.probe.Time()
		if err != nil {
			return 0, 0, err
		}
		if ns, err = f(); err != nil {
			return 0, 0, err
		}
		after, err := s.probe.Time()
		if err != nil {
			return 0, 0, err
		}
		factor = 2 * s.high / (before + after)
		if math.Abs(before-after) <= speedAgree*min(before, after) {
			break
		}
	}
	return ns, factor, nil
}
