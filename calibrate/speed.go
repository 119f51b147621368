package calibrate

import (
	"fmt"
	"math"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/dpperf/dpperf/target"
	"github.com/dpperf/dpperf/testrun"
)

// SpeedKey is the calibration spread key of the speed probe: a fixed
// micro-program timed whole in every run, like per_packet, so that a later
// timing of the same probe says how fast the core runs now against the
// runs the costs came from. A virtual core may run at two speeds (another
// tenant on its sibling thread, a frequency step) for tenths of a second;
// the costs' high percentile is the slow one.
const SpeedKey = "speed"

// speedCopies is the probe's length: long enough (about 100–200 ns a run)
// that BPF_PROG_TEST_RUN's 1 ns resolution stays under 1% of it.
const speedCopies = 512

// speedRepeat is the probe's runs per timing: about 2 ms of runs, as the
// calibration's.
const speedRepeat = 10000

// speedBench times the probe: independent ALU operations with a packet
// load every eighth, the mix parsers run.
func speedBench() *bench {
	return &bench{key: SpeedKey, raw: true, setup: speedBody}
}

func speedBody(b *builder) {
	for i := range speedCopies {
		if i%8 == 7 {
			b.add(asm.LoadMem(dest(i), asm.R7, pktOne, asm.DWord))
			continue
		}
		b.add(asm.Add.Reg(dest(i), asm.R2))
	}
}

// Probe is the speed probe loaded, for timing beside other programs.
type Probe struct {
	c   *ebpf.Collection
	pkt []byte
	// High is the probe's time at the calibration's percentile: the speed
	// of the slow state the costs were priced at (0: unknown).
	High float64
}

// NewProbe loads the speed probe (root).
func NewProbe() (*Probe, error) {
	b := &builder{}
	b.prologue()
	speedBody(b)
	b.epilogue()
	c, err := newCollection(b.spec(nil), Options{})
	if err != nil {
		return nil, fmt.Errorf("speed probe: %w", err)
	}
	return &Probe{c: c, pkt: packet()}, nil
}

// ProbeFor loads the probe for timing against t's calibration: nil when
// the calibration did not time it (built-in targets, older calibrations).
func ProbeFor(t *target.Target) (*Probe, error) {
	if t == nil || t.Calibration == nil {
		return nil, nil
	}
	s, ok := t.Calibration.Spread[SpeedKey]
	if !ok || s.High <= 0 {
		return nil, nil
	}
	p, err := NewProbe()
	if err != nil {
		return nil, err
	}
	p.High = s.High
	return p, nil
}

// Time is the probe's mean time of one run now, in ns, on the calling
// thread's CPU (pin it to the calibrated one).
func (p *Probe) Time() (float64, error) {
	return timeOnce(p.c, p.pkt, speedRepeat)
}

// aroundTries is how many times a timing is taken again when the probe
// before it and the probe after it disagree by more than aroundAgree: the
// core changed speed during the timing.
const (
	aroundTries = 4
	aroundAgree = 0.10
)

// Around takes the timing f between two timings of the probe on cpu and
// returns f's figure with the factor that carries it to the slow state
// (High over the two probes' mean). When the probes disagree the timing
// is taken again, up to aroundTries times, and the last is kept. A nil
// probe runs f alone and returns factor 0.
func (p *Probe) Around(cpu int, f func() (float64, error)) (ns, factor float64, err error) {
	if p == nil {
		ns, err = f()
		return ns, 0, err
	}
	unpin, err := testrun.Pin(cpu)
	if err != nil {
		return 0, 0, err
	}
	defer unpin()
	ns, speed, err := p.around(f)
	if err != nil {
		return 0, 0, err
	}
	return ns, p.High / speed, nil
}

// around takes f between two timings of the probe, again when they
// disagree, and returns f's figure with the probe's mean time around it.
func (p *Probe) around(f func() (float64, error)) (ns, speed float64, err error) {
	for range aroundTries {
		before, err := p.Time()
		if err != nil {
			return 0, 0, err
		}
		if ns, err = f(); err != nil {
			return 0, 0, err
		}
		after, err := p.Time()
		if err != nil {
			return 0, 0, err
		}
		speed = (before + after) / 2
		if math.Abs(before-after) <= aroundAgree*min(before, after) {
			break
		}
	}
	return ns, speed, nil
}

// Close unloads the probe (a nil probe is none).
func (p *Probe) Close() {
	if p != nil {
		p.c.Close()
	}
}
