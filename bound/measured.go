package bound

// Measured is the example packet replayed on the kernel.
type Measured struct {
	KernelVerdict  uint32  `json:"kernel_verdict"`
	InterpVerdict  uint32  `json:"interpreter_verdict"`
	VerdictMatches bool    `json:"verdict_matches"` // kernel, interpreter and prediction agree
	PathMatches    bool    `json:"path_matches"`    // the packet ran exactly the predicted instructions
	Mismatch       string  `json:"mismatch,omitempty"`
	Repeat         int     `json:"repeat"`
	Timings        int     `json:"timings"`       // timings of Repeat runs
	NsPerPacket    float64 `json:"ns_per_packet"` // median over the timings of BPF_PROG_TEST_RUN's mean
	// Stateful is set when the example changes the state it runs in so
	// that its repeats leave the path (a new flow that the next repeat
	// finds): NsPerPacket then times mostly another path. SingleNs times
	// the path itself, in SingleRuns single runs each after restoring the
	// state: their median less that of an empty program timed the same
	// way, plus the empty program's time per run when repeated (the
	// per-packet cost repeated figures include). Single runs meet cold
	// caches and the harness's noise.
	Stateful   bool    `json:"stateful,omitempty"`
	SingleNs   float64 `json:"single_ns,omitempty"`
	SingleRuns int     `json:"single_runs,omitempty"`
	// StreamNs times the path instead on a stream of StreamRuns new flows
	// in one BPF_PROG_TEST_RUN (testrun.Stream): the example with a
	// counter added to its two bytes at StreamOffset, every run of which
	// the interpreter found to take the example's path from the state the
	// runs before it left. It is the program's time per run (a front end
	// that rewrites the packet subtracted, the empty program's repeated
	// time added), with the program and its maps warm. Single runs time
	// the path only when no such bytes exist.
	StreamNs     float64 `json:"stream_ns,omitempty"`
	StreamSlowNs float64 `json:"stream_slow_ns,omitempty"`
	StreamRuns   int     `json:"stream_runs,omitempty"`
	StreamOffset int     `json:"stream_offset,omitempty"`
	// StreamDense is set when the stream ran with every array that the
	// example fills at one index filled at every index with that value
	// (a hashing ring's slots), so that its flows could keep the path.
	StreamDense bool `json:"stream_dense,omitempty"`
	// SlowNs and SingleSlowNs are NsPerPacket and SingleNs carried to the
	// speed of the calibration's slow state: each timing times the ratio of
	// the calibration's speed probe at its high percentile to the probe
	// timed just before and after it (calibrated targets whose calibration
	// timed the probe; 0 otherwise).
	SlowNs       float64 `json:"slow_ns_per_packet,omitempty"`
	SingleSlowNs float64 `json:"single_slow_ns,omitempty"`
	PacketRate   float64 `json:"packet_rate"` // one core: 1e9 / ns_per_packet
	// Checks holds each path the replays ran against that path's own
	// predicted rate: the example's path (repeated, or in single runs when
	// stateful) and the path its repeats settle on. A path the packet runs
	// instead of the predicted one (a map it needs could not be filled) is
	// checked as run. Unchecked says why a timing is held against no path.
	Checks    []PathCheck `json:"checks"`
	Unchecked string      `json:"unchecked,omitempty"`
	Predicted []int32     `json:"-"`
}

// PathCheck is one path a replay ran, held against its own predicted rate:
// the rate a packet on that path reaches under the target (a guarantee
// under a calibrated target) and, for calibrated targets, under the
// calibration's medians (the expected rate).
type PathCheck struct {
	Path         string  `json:"path"` // "example", "as run" (not the predicted path), "repeats"
	How          string  `json:"how"`  // "repeated", "new flows" or "single runs"
	Instructions int     `json:"instructions"`
	Predicted    float64 `json:"predicted_pps"`
	Expected     float64 `json:"expected_pps,omitempty"`
	Measured     float64 `json:"measured_pps"`
	// AtSlowSpeed is the measured rate at the calibration's slow state
	// (Measured.SlowNs): what a guarantee priced at the costs' high
	// percentile is tight against. 0 without a speed probe.
	AtSlowSpeed float64 `json:"slow_state_pps,omitempty"`
	Held        bool    `json:"held"` // measured >= predicted
}
