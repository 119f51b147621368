// Package analytic evaluates the LogNIC analytical model on a compiled
// network (model/flow): the attainable throughput as the minimum over IP,
// link, interface, memory and line capacities (equations 1–4) with the
// binding constraint and every component's headroom, and the latency of
// each traffic class as the weighted average over its paths of queueing
// (M/M/1/N per engine, equations 9–12), service, overhead and data-movement
// times (equations 5–8), with the drop rate at the offered load.
//
// Extensions of §3.7: classes (graphs × packet sizes) share IPs through
// pools or reserved partitions and are weighted by their share of the
// ingress bytes; rate limiters are stations of their own in front of an IP.
//
// Evaluation needs no kernel and allocates nothing after the first call on
// an Evaluator.
package analytic
