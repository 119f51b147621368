// Package sim is a discrete-event simulation of a compiled model network
// (model/flow), used to check the analytical model and to give what the
// model cannot: tail latency.
//
// Packets arrive as a Poisson process; each picks a traffic class by its
// packet share. At a vertex a request joins the queue of one engine of its
// station, chosen uniformly at random (so each engine sees Poisson arrivals,
// as the model assumes), waits if the engine is busy and is dropped if the
// engine's queue already holds N requests. Service times are exponential or
// deterministic with the mean of equation 7. On leaving a vertex the data
// splits over the out-edges in proportion to δ; each part is a request of
// its own downstream. Interface, memory, IP-to-IP links and the egress line
// are FIFO servers with deterministic transfer times (bytes / bandwidth) and
// unbounded buffers; transfer overheads O are pure delays.
package sim
