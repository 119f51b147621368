package calibrate

import (
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
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

// Time is the probe's mean time of one run now, in ns, on the calling
// thread's CPU (pin it to the calibrated one).
func (p *Probe) Time() (float64, error) {
	return timeOnce(p.c, p.pkt, speedRepeat)
}

// Close unloads the probe.
func (p *Probe) Close() { p.c.Close() }
