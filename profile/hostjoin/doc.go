// Package hostjoin answers "which of the target's requests is which of the
// initiator's, and how do the two hosts' clocks relate?" for a path that
// runs over two hosts (NVMe over TCP with the initiator and the target on
// machines of their own).
//
// Each host records its own events on its own monotonic clock. The
// initiator's requests are built from its events as on one host; the
// target's events make target halves (first to last target event of the
// path), keyed by the NVMe queue id and command id, which both sides see.
// A command id is not reused on its queue before its command completes,
// so at a given offset θ (target clock − initiator clock) a target half
// lies inside exactly one initiator request of its key.
//
// Joining. A coarse θ comes from a block of consecutive target halves:
// each half and each initiator request of its key allow θ in
// [t3−t4, t2−t1] (t1 the initiator's send, t2 and t3 the target's first
// and last event, t4 the initiator's completion); the point covered by
// the most halves wins. The halves are then taken in time order, each
// joined with the initiator request of its key that contains it at the
// current θ, which follows the tightest of the recent joins, so drift
// never accumulates.
//
// Clock. Each joined request is one NTP exchange:
//
//	θ_i = ((t2−t1) + (t3−t4)) / 2,   δ_i = ((t4−t1) − (t3−t2)) / 2,
//
// and the true offset lies in [θ_i − δ_i, θ_i + δ_i] whatever the split of
// the network time between the two directions. The run is cut into up to
// 16 windows; the tightest request of each (least δ) goes into a
// least-squares line θ(t) = offset + drift·(t − ref). The error bound is
// the largest, over those windows, of the line's distance from θ_i plus
// δ_i: with linear drift, the true offset is within it of the line over
// the whole run. The same holds for any line; a flat one through the
// middle of the windows' intervals [θ_i − δ_i, θ_i + δ_i] has half their
// spread as its bound, and is taken (drift 0) when that is tighter: the
// drift over the run is then below what the network's noise can show.
//
// Mapping. A joined request's target times are moved onto the initiator's
// clock by θ(t) at its own time. Where that puts them before the send or
// after the completion (the estimate is off by less than its bound, but
// more than that request's network time), the target half is moved as a
// whole inside the initiator's span and counted as shifted: stages that
// cross hosts never come out negative and the target's own stages are
// exact.
package hostjoin
