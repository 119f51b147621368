// Package pipeline is an instrumented packet pipeline to record and
// analyze with dpperf: a UDP sender, a router with a route cache and
// per-route timeouts, and a receiver, connected by bounded packet queues.
// It mirrors a NIC-router benchmark: the router serves a timer component
// over an RPC, and in its eager mode (the planted cost) it re-arms the
// route's timeout on every packet, one trigger_once RPC per packet. The
// recorded trace shows that cost in the RPC and checkpoint tables, and the
// queue fill samples show whether the router works in batches.
//
// It is the demo `dpperf record --pipeline` runs; its recording policy is
// examples/pipeline/record.yml, and docs/record.md walks through finding
// the cost.
package pipeline
