// Package peer answers "what did the other host record?": the side
// channel between a target host's dpperf, which keeps its events of the
// path in a Store and serves them (Handler), and the initiator's, which
// asks for them window by window or all at the end (Client) and joins
// them with its own (profile/hostjoin). The protocol is in protocol.md.
//
// The channel is plain HTTP with a shared bearer token, compared in
// constant time; a request that lacks it or carries another is refused
// with 401 and learns nothing. Replies are decoded strictly: a peer that
// sends garbage gives an error that names the problem, never a panic or
// a partial batch taken as whole.
package peer
