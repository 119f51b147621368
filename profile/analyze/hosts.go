package analyze

// Hosts says how a profile of two hosts came together: how the
// initiator's requests were joined with the target's, how the target's
// clock relates to the initiator's, and, when the target's records are
// missing, why. Its JSON form is described in profile/report/schema.md.
type Hosts struct {
	Clock *Clock     `json:"clock,omitempty"`
	Join  JoinCounts `json:"join"`
	// Partial, when set, is why the target's stages are absent or
	// incomplete (peer down, timed out, sent garbage); the report then
	// holds the initiator's view only, the target's stages merged.
	Partial string `json:"partial,omitempty"`
}

// Clock is the target's monotonic clock against the initiator's:
// target = initiator + OffsetNS + DriftPPM·1e-6·(t − RefNS), with t on
// the initiator's clock, and the true offset within ErrorBoundNS of that
// line over the run.
type Clock struct {
	OffsetNS     float64 `json:"offset_ns"`
	RefNS        int64   `json:"ref_ns"`
	DriftPPM     float64 `json:"drift_ppm"`
	ErrorBoundNS float64 `json:"error_bound_ns"`
	// Requests is how many joined requests gave an estimate; Windows how
	// many windows of the run contributed their tightest one to the fit.
	Requests int64 `json:"requests"`
	Windows  int   `json:"windows"`
}

// JoinCounts counts the requests of each side and how many were joined;
// Unjoined explains the rest, per side and reason.
type JoinCounts struct {
	Initiator int64 `json:"initiator"`
	Target    int64 `json:"target"`
	Joined    int64 `json:"joined"`
	// Shifted counts joined requests whose target times, mapped onto the
	// initiator's clock, fell outside the initiator's send and completion
	// and were moved inside them (by less than the error bound).
	Shifted  int64      `json:"shifted"`
	Unjoined []Unjoined `json:"unjoined,omitempty"`
}

// Unjoined is a count of requests of one side that found no partner, and
// why.
type Unjoined struct {
	Side   string `json:"side"` // initiator or target
	Reason string `json:"reason"`
	Count  int64  `json:"count"`
}
